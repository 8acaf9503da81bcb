/**
 * The stored shape: field names of transaction and participant documents ({@code Fields},
 * {@code TwoRoundFields}), a two-round entry's name and fields ({@code EntryName}), versions, the
 * operation codec, ids compared as MongoDB matches them, and the two internal exceptions. The bottom
 * room: it uses no other.
 */
package io.mongo2pc.internal.format;
