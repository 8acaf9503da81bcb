/**
 * Extension points and test seams of {@link io.mongo2pc.TransactionManager}: the
 * {@link io.mongo2pc.spi.CrashHook} called at every {@link io.mongo2pc.spi.CrashPoint} of the
 * protocol (production passes {@code CrashHook.NONE}; tests and the CLI's demo stop a transaction
 * between any two writes with it, throwing a {@link io.mongo2pc.spi.SimulatedCrash}), and the
 * {@link io.mongo2pc.spi.Clock} of the manager's waits (production passes {@code Clock.SYSTEM};
 * tests move time with their own).
 */
package io.mongo2pc.spi;
