/**
 * The tutorial's rules: the drive loop ({@code Coordinator}) that moves an owned transaction to a
 * terminal state, the owner's writes under its lease ({@code OwnerWrites}), writes in doubt settled by
 * reading what is stored, and finishing after the commit point (in the caller's thread or the
 * background {@code Finisher}). It may use format, wire, participants and state.
 */
package io.mongo2pc.internal.tutorial;
