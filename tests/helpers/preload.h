/*
 * What the LD_PRELOAD libraries of the autotests share: the definition
 * of a function they wrap that comes next (libc's).
 */
#ifndef AFXDP_TESTS_PRELOAD_H
#define AFXDP_TESTS_PRELOAD_H 1

#include <dlfcn.h>

/* Declares 'real_FUNCTION', the next definition of FUNCTION, looked up
 * at the wrapper's first call. */
#define PRELOAD_NEXT(FUNCTION)                                              \
    static __typeof__(&FUNCTION) real_##FUNCTION;                           \
    if (!real_##FUNCTION) {                                                 \
        real_##FUNCTION = (__typeof__(&FUNCTION)) dlsym(RTLD_NEXT,          \
                                                        #FUNCTION);         \
    }

#endif /* AFXDP_TESTS_PRELOAD_H */
