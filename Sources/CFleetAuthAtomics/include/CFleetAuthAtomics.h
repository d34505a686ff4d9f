// Atomic loads and stores of one machine word, for FleetAuthCore's lock-free lookup path, and
// the futex lock under its state on Linux.
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

#if defined(__linux__)
#include <linux/futex.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

// The lock is the three-state futex mutex (0 free, 1 held, 2 held with sleepers): a thread
// that finds it held marks it 2 and sleeps until the word changes; whoever releases a 2
// wakes one sleeper, which marks it 2 again as it takes it (there may be others). A thread
// that takes it with the fast path's 1 while others sleep is harmless: a woken sleeper
// that loses marks it 2 before it sleeps again, so the next release wakes someone. Written
// here rather than in Atomics.c: code compiled there carries DWARF 5 debug information,
// which Debian's valgrind (3.19) cannot read, and `fleetauth-bench --instructions` needs it.

/// A pause for a spinning thread.
static inline void fleetauth_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/// The contended half of `fleetauth_lock`: spins briefly, then sleeps on the word with the
/// futex system call, marking it 2 (held, with sleepers).
static __attribute__((noinline)) void fleetauth_lock_contended(uint32_t *word) {
    // The guarded sections are a few hundred nanoseconds: a short spin usually outlasts one,
    // far cheaper than two system calls.
    for (int spin = 0; spin < 100; spin++) {
        uint32_t expected = 0;
        if (__atomic_load_n(word, __ATOMIC_RELAXED) == 0
            && __atomic_compare_exchange_n(word, &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            return;
        }
        fleetauth_cpu_relax();
    }
    while (__atomic_exchange_n(word, 2, __ATOMIC_ACQUIRE) != 0) {
        // Returns at once if the word is no longer 2; spurious wake-ups just loop.
        syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
    }
}

/// Wakes one thread sleeping on `word`.
static __attribute__((noinline)) void fleetauth_lock_wake(uint32_t *word) {
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/// Takes the lock whose word is `*word` (0 free, 1 held, 2 held with sleepers): one
/// compare-and-swap when it is free, the futex when it is not. Acquiring: the holder sees
/// every write made before the last release.
static inline void fleetauth_lock(uint32_t *word) {
    uint32_t expected = 0;
    if (__builtin_expect(
            __atomic_compare_exchange_n(word, &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED), 1)) {
        return;
    }
    fleetauth_lock_contended(word);
}

/// Releases the lock taken with `fleetauth_lock`, waking one sleeper if any.
static inline void fleetauth_unlock(uint32_t *word) {
    if (__builtin_expect(__atomic_exchange_n(word, 0, __ATOMIC_RELEASE) == 2, 0)) {
        fleetauth_lock_wake(word);
    }
}
#endif

#endif
