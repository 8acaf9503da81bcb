package io.mongo2pc.model;

import java.util.ArrayList;
import java.util.List;

/**
 * The visited set of {@link ModelChecker}: each state's key and its id (the order it was added
 * in). An open-addressing table of 64-bit hashes beside the ids, so that a lookup reads one slot
 * of a primitive array per probe and compares a key only when its hash matches (exact: equal keys,
 * never hashes alone, make a state known). It replaces a {@code HashMap<String, Integer>}, whose
 * lookups (a node, a key, its bytes per probe) took about a third of a big model check's time.
 * Not thread-safe.
 */
final class VisitedKeys {
    private final List<String> keys = new ArrayList<>();
    /** The hash of the key in each slot, 0 for an empty slot (a key's hash is never 0). */
    private long[] hashes = new long[1 << 16];
    private int[] ids = new int[1 << 16];

    int size() {
        return keys.size();
    }

    /** The key of state {@code id}. */
    String key(int id) {
        return keys.get(id);
    }

    /** The hash {@link #find} and {@link #add} take: FNV-1a over the key's characters, mixed, never 0. */
    static long hash(String key) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < key.length(); i++) {
            h = (h ^ key.charAt(i)) * 0x100000001b3L;
        }
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        return h == 0 ? 1 : h;
    }

    /** The id of {@code key} (whose {@link #hash} is {@code hash}), or -1 if it was not added. */
    int find(String key, long hash) {
        int mask = hashes.length - 1;
        for (int slot = (int) hash & mask; hashes[slot] != 0; slot = (slot + 1) & mask) {
            if (hashes[slot] == hash && keys.get(ids[slot]).equals(key)) {
                return ids[slot];
            }
        }
        return -1;
    }

    /** Adds {@code key}, which {@link #find} did not find; returns its id. */
    int add(String key, long hash) {
        int id = keys.size();
        keys.add(key);
        if (keys.size() * 4L > hashes.length * 3L) {
            grow();
        }
        put(hash, id);
        return id;
    }

    private void put(long hash, int id) {
        int mask = hashes.length - 1;
        int slot = (int) hash & mask;
        while (hashes[slot] != 0) {
            slot = (slot + 1) & mask;
        }
        hashes[slot] = hash;
        ids[slot] = id;
    }

    private void grow() {
        long[] oldHashes = hashes;
        int[] oldIds = ids;
        hashes = new long[oldHashes.length * 2];
        ids = new int[oldIds.length * 2];
        for (int slot = 0; slot < oldHashes.length; slot++) {
            if (oldHashes[slot] != 0) {
                put(oldHashes[slot], oldIds[slot]);
            }
        }
    }
}
