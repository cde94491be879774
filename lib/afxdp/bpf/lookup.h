/* The lookup of a packet's key: the exact-match cache, then the
 * offloaded megaflows mask by mask, with the checks that catch an entry
 * the core is rewriting (fastpath-maps.h says how it writes them). */

#ifndef AFXDP_BPF_LOOKUP_H
#define AFXDP_BPF_LOOKUP_H 1

#include "count.h"
#include "maps.h"

static __always_inline int
keys_equal(const struct afxdp_flow_key *a, const struct afxdp_flow_key *b)
{
    const __u64 *x = (const __u64 *) a, *y = (const __u64 *) b;
    __u64 diff = 0;
#pragma unroll
    for (int i = 0; i < AFXDP_FP_KEY_WORDS; i++) {
        diff |= x[i] ^ y[i];
    }
    return !diff;
}

/* One word of a map entry, loaded once: the value checked is the value
 * used (a plain load the compiler may repeat, and the core may have
 * rewritten the word in between). */
#define LOAD_ONCE(P) (*(const volatile __u64 *) (P))

enum lookup_result {
    FOUND,
    NOT_FOUND,
    CHANGING,            /* Met an entry the core was rewriting. */
};

/* The packet's key 'k' under mask 'mw' into 'mkw', and the mask's check
 * (its words and 'use', the in_use and generation word after them). */
static __always_inline __u64
mask_key(const __u64 *k, const __u64 *mw, __u64 use, __u64 *mkw)
{
    __u64 mcheck = AFXDP_FP_CHECK_SEED
                   + use * AFXDP_FP_HASH_MUL(AFXDP_FP_KEY_WORDS);
#pragma unroll
    for (int i = 0; i < AFXDP_FP_KEY_WORDS; i++) {
        __u64 w = LOAD_ONCE(&mw[i]);
        mkw[i] = k[i] & w;
        mcheck += w * AFXDP_FP_HASH_MUL(i);
    }
    return mcheck;
}

/* Flow 'f' read once: its key compared with the masked key 'mkw' ('*diff'
 * non-zero if another), the rest copied into 'tail'; returns its check.
 * Loops, not unrolled: unrolled, the seventeen words' products spill and
 * clang 19 takes the program past the kernel's 512 bytes of stack (424
 * so, with clang 14 312).  Only a packet the slots answer, not in the
 * cache, runs them. */
static __always_inline __u64
read_flow(const struct afxdp_fp_flow *f, const __u64 *mkw, __u64 *tail,
          __u64 *diff)
{
    const __u64 *fw = (const __u64 *) f;
    __u64 fcheck = AFXDP_FP_CHECK_SEED;
#pragma nounroll
    for (int i = 0; i < AFXDP_FP_KEY_WORDS; i++) {
        __u64 w = LOAD_ONCE(&fw[i]);
        *diff |= w ^ mkw[i];
        fcheck += w * AFXDP_FP_HASH_MUL(i);
    }
#pragma nounroll
    for (int i = AFXDP_FP_KEY_WORDS; i < AFXDP_FP_FLOW_WORDS; i++) {
        __u64 w = LOAD_ONCE(&fw[i]);
        tail[i - AFXDP_FP_KEY_WORDS] = w;
        fcheck += w * AFXDP_FP_HASH_MUL(i);
    }
    return fcheck;
}

/* The flow whose mask and masked key the packet's key meets first, in
 * slot order: its action into the cache entry 'e', emptied first, whose
 * key holds each masked key meanwhile (on the stack it would take the
 * program past the kernel's 512 bytes with clang 19).  Each word of the
 * mask and of the flow is loaded once and summed into the entry's check
 * as it is used; a check that fails, or a flow put under another mask
 * than the one the key was masked with, means the core is changing them
 * (see fastpath-maps.h): CHANGING, and the packet goes to OVS.
 *
 * A function of its own, not inlined (a global function, which the
 * verifier checks once): inlined, its loops over the slots were checked
 * again for each way through the parser, near the verifier's million
 * instructions.  Only a packet the cache does not answer calls it. */
__attribute__((noinline)) enum lookup_result
lookup_masks(const struct afxdp_flow_key *key,
             const struct afxdp_fp_config *cfg,
             struct afxdp_fp_emc_entry *e)
{
    if (!key || !cfg || !e) {
        return NOT_FOUND;   /* Cannot be: the verifier asks all the same. */
    }
    struct afxdp_fp_flow_tail *out = &e->flow;
    __u32 n = cfg->mask_slots;
    struct afxdp_fp_flow_key fk;
    const __u64 *k = (const __u64 *) key;
    __u64 *mkw = (__u64 *) &e->key;
    __u64 *tail = (__u64 *) out;

    /* Per CPU: no reader until it is whole.  An exchange, which every
     * JIT makes a full barrier (x86 xchg, arm64 swpal): the slots below
     * are read after the generation lookup() read, on a CPU that may
     * reorder loads too.  Else a flow read before the core changed the
     * maps could be cached under the generation written after. */
    __atomic_exchange_n(&e->generation, 0, __ATOMIC_SEQ_CST);
    fk.pad = 0;
    /* 64 bits: spilled to the stack, a 32-bit counter loses its value to
     * the verifier, which then sees the loop as endless. */
    for (__u64 slot = 0; slot < AFXDP_FP_MAX_MASKS; slot++) {
        if (slot >= n) {
            break;
        }
        __u32 index = slot;
        const struct afxdp_fp_mask *m = bpf_map_lookup_elem(&fp_masks,
                                                            &index);
        if (!m) {
            continue;
        }
        const __u64 *mw = (const __u64 *) m;
        /* in_use and the generation: the word after the mask. */
        union {
            __u64 word;
            struct {
                __u32 in_use;
                __u32 generation;
            };
        } use;
        use.word = LOAD_ONCE(&mw[AFXDP_FP_KEY_WORDS]);
        if (!use.in_use) {
            continue;
        }
        __u64 mcheck = mask_key(k, mw, use.word, mkw);
        fk.mask_slot = slot;
        fk.hash = afxdp_fp_key_hash(&e->key);
        const struct afxdp_fp_flow *f = bpf_map_lookup_elem(&fp_flows, &fk);
        if (!f) {
            continue;
        }
        __u64 diff = 0;
        __u64 fcheck = read_flow(f, mkw, tail, &diff);
        if (afxdp_fp_check_mix(fcheck) != LOAD_ONCE(&f->check)
            || afxdp_fp_check_mix(mcheck) != LOAD_ONCE(&m->check)) {
            return CHANGING;
        }
        if (diff) {
            continue;   /* Another key of the same hash. */
        }
        if (out->mask_generation != use.generation) {
            return CHANGING;
        }
        return FOUND;
    }
    return NOT_FOUND;
}

/* The flow the packet's key meets: from this CPU's exact-match cache if
 * it was found there under the maps' present generation, else from the
 * mask slots, copied into the cache.  The generation is read before the
 * slots are: an entry found in maps that change meanwhile is cached
 * under the old one, and never trusted.  NULL if none, with 'changing'
 * set if that is because the core was changing what the packet met. */
static __always_inline const struct afxdp_fp_action *
lookup(const struct afxdp_flow_key *key, const struct afxdp_fp_config *cfg,
       int *changing)
{
    const __u64 generation = LOAD_ONCE(&cfg->generation);
    /* The sum's top bits, which depend on every bit of the key (a
     * product's bit n on the word's bits up to n): a multiply shorter
     * than the whole hash on the way to the entry's first load. */
    __u32 index = afxdp_fp_key_sum(key) >> (64 - AFXDP_FP_EMC_BITS);
    struct afxdp_fp_emc_entry *e = bpf_map_lookup_elem(&fp_emc, &index);
    if (!e) {
        return 0;   /* Cannot be: the index is in range. */
    }
    if (generation && e->generation == generation
        && keys_equal(&e->key, key)) {
        return &e->flow.action;
    }
    /* The flow is copied straight into the entry, and only a flow found
     * whole makes it whole again. */
    enum lookup_result r = lookup_masks(key, cfg, e);
    if (r != FOUND) {
        *changing = r == CHANGING;
        return 0;
    }
    e->key = *key;
    e->generation = generation;
    count(AFXDP_FP_cache_filled);
    return &e->flow.action;
}

#endif /* AFXDP_BPF_LOOKUP_H */
