// Atomic loads and stores of one machine word, for FleetAuthCore's lock-free lookup path.
//
// Swift's own atomics (the Synchronization module) need macOS 15 and iOS 18; FleetAuth
// supports earlier systems, so the few operations its lookup needs are C11 builtins here,
// inlined into the Swift code that calls them and understood by the thread sanitizer.
#ifndef CFLEETAUTHATOMICS_H
#define CFLEETAUTHATOMICS_H

#include <stdint.h>

/// Reads `*word`; every write made before the store that wrote the value read is visible.
static inline intptr_t fleetauth_load_acquire(const intptr_t *word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

/// Writes `value` to `*word`, publishing every write made before it to acquiring readers.
static inline void fleetauth_store_release(intptr_t *word, intptr_t value) {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

/// Reads `*word` with no ordering: for a counter whose readers need only its value.
static inline intptr_t fleetauth_load_relaxed(const intptr_t *word) {
    return __atomic_load_n(word, __ATOMIC_RELAXED);
}

/// Writes `value` to `*word` with no ordering: for a counter only one thread writes.
static inline void fleetauth_store_relaxed(intptr_t *word, intptr_t value) {
    __atomic_store_n(word, value, __ATOMIC_RELAXED);
}

/// Asks the processor to start loading the cache line at `address`, to be read soon. A
/// hint only: it never faults, whatever the address, and changes no value.
static inline void fleetauth_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
