# ovs-afxdp configure checks.  Each macro decides one thing and records it
# in config.h or in an AC_SUBST variable; AFXDP_SUMMARY prints them all.

dnl AFXDP_CHECK_CXX17: the core is C++17.
AC_DEFUN([AFXDP_CHECK_CXX17], [
  AC_LANG_PUSH([C++])
  AC_MSG_CHECKING([whether $CXX supports C++17])
  afxdp_save_CXXFLAGS=$CXXFLAGS
  CXXFLAGS="$CXXFLAGS -std=c++17"
  AC_COMPILE_IFELSE(
    [AC_LANG_PROGRAM([[#include <optional>
                       #include <string_view>]],
                     [[std::optional<std::string_view> v{"x"};
                       if constexpr (sizeof(int) > 0) { return v->size() - 1; }]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     AC_MSG_ERROR([a C++17 compiler is required (g++ 8 or later).])])
  CXXFLAGS=$afxdp_save_CXXFLAGS
  AC_LANG_POP([C++])
])

dnl AFXDP_CHECK_OVS_SOURCE: where the Open vSwitch source comes from.
dnl A directory is copied, a tarball is unpacked; either way into the build
dnl tree, never into the source tree.
AC_DEFUN([AFXDP_CHECK_OVS_SOURCE], [
  AC_ARG_WITH([ovs-source],
    [AS_HELP_STRING([--with-ovs-source=DIR|TARBALL],
      [Open vSwitch source tree or tarball to build against
       (default: /usr/src/openvswitch/openvswitch.tar.gz from Debian's
       openvswitch-source package)])],
    [OVS_SOURCE=$withval],
    [OVS_SOURCE=/usr/src/openvswitch/openvswitch.tar.gz])
  AC_MSG_CHECKING([for the Open vSwitch source])
  case $OVS_SOURCE in
    /*) ;;
    *) OVS_SOURCE=`pwd`/$OVS_SOURCE ;;
  esac
  if test -d "$OVS_SOURCE" && test -f "$OVS_SOURCE/lib/netdev-afxdp.h"; then
    OVS_SOURCE_KIND=dir
  elif test -f "$OVS_SOURCE" && tar tzf "$OVS_SOURCE" >/dev/null 2>&1; then
    OVS_SOURCE_KIND=tarball
  else
    AC_MSG_RESULT([not found])
    AC_MSG_ERROR([no Open vSwitch source at $OVS_SOURCE.
Install Debian's openvswitch-source package (apt-get install
openvswitch-source) or name a tree or tarball with
--with-ovs-source=DIR|TARBALL.])
  fi
  AC_MSG_RESULT([$OVS_SOURCE ($OVS_SOURCE_KIND)])
  AC_SUBST([OVS_SOURCE])
  AC_SUBST([OVS_SOURCE_KIND])
  AC_ARG_VAR([OVS_CONFIGURE_FLAGS],
             [extra arguments for Open vSwitch's own configure])
])

dnl AFXDP_CHECK_XSK: libxdp (xdp/xsk.h, -lxdp) or an old libbpf that still
dnl ships bpf/xsk.h, and whether need_wakeup is there in both the library
dnl and the kernel headers.
AC_DEFUN([AFXDP_CHECK_XSK], [
  AC_CHECK_HEADER([linux/if_xdp.h], [],
    [AC_MSG_ERROR([linux/if_xdp.h not found: install linux-libc-dev.])])
  AC_CHECK_HEADER([bpf/libbpf.h], [],
    [AC_MSG_ERROR([bpf/libbpf.h not found: install libbpf-dev.])])
  AC_CHECK_HEADER([numaif.h], [],
    [AC_MSG_ERROR([numaif.h not found: install libnuma-dev.])])
  XSK_LIBS=
  afxdp_save_LIBS=$LIBS
  AC_CHECK_LIB([bpf], [bpf_xdp_attach], [],
    [AC_MSG_ERROR([libbpf with bpf_xdp_attach (0.8 or later) is required.])])
  AC_CHECK_HEADER([xdp/xsk.h], [afxdp_xsk_header=xdp/xsk.h], [])
  if test "x$afxdp_xsk_header" = xxdp/xsk.h; then
    AC_CHECK_LIB([xdp], [xsk_umem__create],
      [XSK_LIBS="-lxdp -lbpf"
       AC_DEFINE([HAVE_LIBXDP], [1], [Define to 1 if xsk.h comes from libxdp.])],
      [afxdp_xsk_header=])
  fi
  if test "x$afxdp_xsk_header" = x; then
    AC_CHECK_HEADER([bpf/xsk.h],
      [afxdp_xsk_header=bpf/xsk.h
       XSK_LIBS="-lbpf"],
      [AC_MSG_ERROR([neither libxdp (xdp/xsk.h) nor a libbpf with bpf/xsk.h
was found: install libxdp-dev.])])
  fi
  LIBS=$afxdp_save_LIBS
  AC_SUBST([XSK_LIBS])

  AC_ARG_ENABLE([need-wakeup],
    [AS_HELP_STRING([--disable-need-wakeup],
      [build without XDP need_wakeup support even where it is available])],
    [], [enable_need_wakeup=yes])
  afxdp_need_wakeup=no
  AC_CHECK_DECL([xsk_ring_prod__needs_wakeup],
    [afxdp_lib_need_wakeup=yes], [afxdp_lib_need_wakeup=no],
    [[#include <$afxdp_xsk_header>]])
  AC_CHECK_DECL([XDP_USE_NEED_WAKEUP],
    [afxdp_kernel_need_wakeup=yes], [afxdp_kernel_need_wakeup=no],
    [[#include <linux/if_xdp.h>]])
  if test "$enable_need_wakeup" != no &&
     test $afxdp_lib_need_wakeup = yes &&
     test $afxdp_kernel_need_wakeup = yes; then
    afxdp_need_wakeup=yes
    AC_DEFINE([HAVE_XDP_NEED_WAKEUP], [1],
      [Define to 1 if both xsk.h and linux/if_xdp.h know need_wakeup.])
  fi
  AC_CHECK_MEMBER([struct xdp_statistics.rx_ring_full],
    [AC_DEFINE([HAVE_XDP_STATISTICS_V2], [1],
      [Define to 1 if struct xdp_statistics has the ring counters.])],
    [], [[#include <linux/if_xdp.h>]])
  AC_CHECK_DECL([XDP_OPTIONS],
    [AC_DEFINE([HAVE_XDP_OPTIONS], [1],
      [Define to 1 if getsockopt(XDP_OPTIONS) is known.])],
    [], [[#include <linux/if_xdp.h>]])
])

dnl AFXDP_CHECK_GTEST: GoogleTest for the unit tests (Debian: libgtest-dev).
AC_DEFUN([AFXDP_CHECK_GTEST], [
  AC_LANG_PUSH([C++])
  afxdp_save_CXXFLAGS=$CXXFLAGS
  CXXFLAGS="$CXXFLAGS -std=c++17"
  AC_CHECK_HEADER([gtest/gtest.h], [afxdp_gtest=yes], [afxdp_gtest=no])
  CXXFLAGS=$afxdp_save_CXXFLAGS
  AC_LANG_POP([C++])
  AM_CONDITIONAL([HAVE_GTEST], [test $afxdp_gtest = yes])
])

dnl AFXDP_CHECK_SANITIZERS: --enable-sanitizers builds our code with ASan
dnl and UBSan.
AC_DEFUN([AFXDP_CHECK_SANITIZERS], [
  AC_ARG_ENABLE([sanitizers],
    [AS_HELP_STRING([--enable-sanitizers],
      [build our code with AddressSanitizer and UndefinedBehaviorSanitizer])],
    [], [enable_sanitizers=no])
  SANITIZER_FLAGS=
  if test "$enable_sanitizers" = yes; then
    SANITIZER_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer"
  fi
  AC_SUBST([SANITIZER_FLAGS])
])

dnl AFXDP_CHECK_FUZZER: a clang++ whose -fsanitize=fuzzer links, for the
dnl libFuzzer harnesses in tests/fuzz (make check-fuzz).  Set FUZZ_CXX to
dnl choose it, or FUZZ_CXX=no to do without.
AC_DEFUN([AFXDP_CHECK_FUZZER], [
  AC_ARG_VAR([FUZZ_CXX],
             [clang++ for the libFuzzer harnesses (default: the first clang++ found; no: none)])
  if test "x$FUZZ_CXX" != xno; then
    AC_CHECK_PROGS([FUZZ_CXX],
      [clang++ clang++-19 clang++-18 clang++-17 clang++-16 clang++-15 clang++-14])
  fi
  afxdp_fuzzer=no
  if test -n "$FUZZ_CXX" && test "x$FUZZ_CXX" != xno; then
    AC_LANG_PUSH([C++])
    AC_MSG_CHECKING([whether $FUZZ_CXX links -fsanitize=fuzzer,address,undefined])
    afxdp_save_CXX=$CXX
    afxdp_save_CXXFLAGS=$CXXFLAGS
    afxdp_save_LDFLAGS=$LDFLAGS
    CXX=$FUZZ_CXX
    CXXFLAGS="-std=c++17 -fsanitize=fuzzer,address,undefined"
    LDFLAGS=
    AC_LINK_IFELSE(
      [AC_LANG_SOURCE([[#include <cstddef>
                        #include <cstdint>
                        extern "C" int
                        LLVMFuzzerTestOneInput(const uint8_t *, size_t n)
                        { return int(n) - int(n); }]])],
      [afxdp_fuzzer=yes])
    CXX=$afxdp_save_CXX
    CXXFLAGS=$afxdp_save_CXXFLAGS
    LDFLAGS=$afxdp_save_LDFLAGS
    AC_MSG_RESULT([$afxdp_fuzzer])
    AC_LANG_POP([C++])
  fi
  afxdp_fuzzer_summary=$afxdp_fuzzer
  if test $afxdp_fuzzer = yes; then
    afxdp_fuzzer_summary="yes ($FUZZ_CXX)"
  fi
  AM_CONDITIONAL([HAVE_FUZZER], [test $afxdp_fuzzer = yes])
])

dnl AFXDP_CHECK_FRAME_DEBUG: --enable-frame-debug records where every UMEM
dnl frame is and aborts on a move that does not start there (double free,
dnl lost frame).  It costs a byte per frame and a check per packet.
AC_DEFUN([AFXDP_CHECK_FRAME_DEBUG], [
  AC_ARG_ENABLE([frame-debug],
    [AS_HELP_STRING([--enable-frame-debug],
      [track every UMEM frame's owner and abort on a wrong move])],
    [], [enable_frame_debug=no])
  FRAME_DEBUG_FLAGS=
  if test "$enable_frame_debug" = yes; then
    FRAME_DEBUG_FLAGS="-DAFXDP_FRAME_DEBUG=1"
  fi
  AC_SUBST([FRAME_DEBUG_FLAGS])
])

dnl AFXDP_SUMMARY: what configure decided, in one place.
AC_DEFUN([AFXDP_SUMMARY], [
  cat <<SUMMARY

ovs-afxdp configuration:
  Open vSwitch source:  $OVS_SOURCE ($OVS_SOURCE_KIND)
  xsk.h:                $afxdp_xsk_header ($XSK_LIBS)
  need_wakeup:          $afxdp_need_wakeup (library: $afxdp_lib_need_wakeup, kernel headers: $afxdp_kernel_need_wakeup, requested: $enable_need_wakeup)
  C++ compiler:         $CXX (C++17)
  GoogleTest:           $afxdp_gtest
  sanitizers:           $enable_sanitizers
  frame debug:          $enable_frame_debug
  libFuzzer:            $afxdp_fuzzer_summary
SUMMARY
])
