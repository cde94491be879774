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
dnl tree, never into the source tree.  Without --with-ovs-source, Debian's
dnl openvswitch-source package: a tarball on Debian 12, an unpacked tree on
dnl Debian 13.
AC_DEFUN([AFXDP_CHECK_OVS_SOURCE], [
  AC_ARG_WITH([ovs-source],
    [AS_HELP_STRING([--with-ovs-source=DIR|TARBALL],
      [Open vSwitch source tree or tarball to build against: OVS 3.1 to
       3.7 or main (default: Debian's openvswitch-source package,
       /usr/src/openvswitch/openvswitch.tar.gz or the tree in
       /usr/src/openvswitch)])],
    [OVS_SOURCE=$withval],
    [OVS_SOURCE=
     for afxdp_src in /usr/src/openvswitch/openvswitch.tar.gz \
                      /usr/src/openvswitch /usr/src/openvswitch/*/; do
       if test -f "$afxdp_src" || test -f "$afxdp_src/lib/netdev-afxdp.h"
       then
         OVS_SOURCE=${afxdp_src%/}
         break
       fi
     done
     test -n "$OVS_SOURCE" || OVS_SOURCE=/usr/src/openvswitch])
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
  AFXDP_CHECK_OVS_FEATURES
  AFXDP_CHECK_OVS_PYTHON
])

dnl AFXDP_CHECK_OVS_PYTHON: the Python that OVS's build and test suites
dnl run.  Debian's own /usr/bin/python3 first: it has the modules that
dnl ovs-afxdp-deps installs for OVS's suite (scapy, pyftpdlib), which
dnl another python3 earlier on PATH (pyenv, a venv) may lack, silently
dnl skipping tests.
AC_DEFUN([AFXDP_CHECK_OVS_PYTHON], [
  AC_ARG_VAR([OVS_PYTHON3],
             [python3 for Open vSwitch's build and tests (default: /usr/bin/python3)])
  if test -z "$OVS_PYTHON3"; then
    if test -x /usr/bin/python3; then
      OVS_PYTHON3=/usr/bin/python3
    else
      AC_PATH_PROG([OVS_PYTHON3], [python3])
    fi
  fi
])

dnl AFXDP_OVS_GREP(FILE, REGEX): whether FILE of the probed OVS tree (see
dnl AFXDP_CHECK_OVS_FEATURES) has a line matching the extended REGEX.
AC_DEFUN([AFXDP_OVS_GREP],
  [grep -Eq "$2" "$afxdp_probe/$1" 2>/dev/null])

dnl AFXDP_CHECK_OVS_FEATURES: what the OVS tree has that the shim or the
dnl patches depend on, found in its files, never from its version number.
dnl The few files read are copied (or unpacked) into a scratch directory.
AC_DEFUN([AFXDP_CHECK_OVS_FEATURES], [
  afxdp_probe=ovs-probe.$$
  rm -rf $afxdp_probe && mkdir $afxdp_probe
  afxdp_probe_files="configure.ac lib/netdev-linux.c lib/netdev-linux-private.h
    lib/dp-packet.h lib/netdev.c lib/dpif-offload-provider.h
    lib/netdev-offload-provider.h lib/flow.h lib/dpif-netdev-private-flow.h"
  if test $OVS_SOURCE_KIND = dir; then
    for f in $afxdp_probe_files; do
      if test -f "$OVS_SOURCE/$f"; then
        mkdir -p "$afxdp_probe/`dirname $f`"
        cp "$OVS_SOURCE/$f" "$afxdp_probe/$f"
      fi
    done
  else
    afxdp_top=`tar tzf "$OVS_SOURCE" 2>/dev/null | sed -n '1s,/.*,,p'`
    for f in $afxdp_probe_files; do
      tar xzf "$OVS_SOURCE" -C $afxdp_probe --strip-components=1 \
          "$afxdp_top/$f" 2>/dev/null
    done
  fi

  AC_MSG_CHECKING([the Open vSwitch version])
  OVS_VERSION=`sed -n 's/^A[[C]]_INIT(openvswitch, *\([[^,]]*\),.*/\1/p' \
               $afxdp_probe/configure.ac 2>/dev/null`
  if test -z "$OVS_VERSION" || test ! -f $afxdp_probe/lib/netdev-linux.c; then
    AC_MSG_RESULT([unknown])
    rm -rf $afxdp_probe
    AC_MSG_ERROR([$OVS_SOURCE does not look like an Open vSwitch source
tree (no configure.ac that names openvswitch, or no
lib/netdev-linux.c).])
  fi
  AC_MSG_RESULT([$OVS_VERSION])
  AC_SUBST([OVS_VERSION])

  dnl The afxdp classes' get_status: ours (OVS 3.3+) or netdev-linux's.
  AC_MSG_CHECKING([whether OVS's afxdp classes call netdev_afxdp_get_status])
  if AFXDP_OVS_GREP([lib/netdev-linux.c],
                    [\.get_status *= *netdev_afxdp_get_status]); then
    afxdp_ovs_get_status=yes
  else
    afxdp_ovs_get_status=no
  fi
  AC_MSG_RESULT([$afxdp_ovs_get_status])

  dnl The patches to apply: each is needed unless OVS has the hook.
  OVS_PATCHES_APPLIED=
  if test $afxdp_ovs_get_status = no; then
    OVS_PATCHES_APPLIED="ovs-patches/netdev-linux-afxdp-get-status.patch"
  fi
  OVS_PATCHES_APPLIED="$OVS_PATCHES_APPLIED
    ovs-patches/netdev-afxdp-nonpmd-signal.patch
    ovs-patches/dp-packet-afxdp-batch-free.patch
    ovs-patches/automake-netdev-offload-afxdp.patch"
  OVS_PATCHES_APPLIED=`echo $OVS_PATCHES_APPLIED`
  AC_SUBST([OVS_PATCHES_APPLIED])

  dnl Still there or gone (3.3): the class's .init callback; we do it in
  dnl construct either way, this is for the summary.
  if AFXDP_OVS_GREP([lib/netdev-linux.c], [\.init *= *netdev_afxdp_init]); then
    afxdp_ovs_init=yes
  else
    afxdp_ovs_init=no
  fi

  dnl OVS's own use-need-wakeup option (gone in 3.7): ours stays.
  if AFXDP_OVS_GREP([lib/netdev-linux-private.h], [requested_need_wakeup]); then
    afxdp_ovs_need_wakeup=yes
  else
    afxdp_ovs_need_wakeup=no
  fi

  dnl Growable packet batches (OVS main): emptied with
  dnl dp_packet_batch_reset(), which keeps their array.
  AC_MSG_CHECKING([whether OVS's packet batches grow past NETDEV_MAX_BURST])
  if AFXDP_OVS_GREP([lib/dp-packet.h], [^dp_packet_batch_reset *\(]); then
    OVS_AFXDP_BATCH_RESET=1
    afxdp_ovs_batches="yes (dp_packet_batch_reset)"
  else
    OVS_AFXDP_BATCH_RESET=0
    afxdp_ovs_batches="no"
  fi
  AC_MSG_RESULT([$afxdp_ovs_batches])
  AC_SUBST([OVS_AFXDP_BATCH_RESET])

  dnl flow_compose() took a bad_csum argument in OVS 3.5 (for
  dnl tests/test-afxdp-xlate.c, which writes packets from flows).
  AC_MSG_CHECKING([whether OVS's flow_compose() takes bad_csum])
  if AFXDP_OVS_GREP([lib/flow.h], [l7_len, bool bad_csum]); then
    OVS_AFXDP_FLOW_COMPOSE_CSUM=1
    afxdp_ovs_compose=yes
  else
    OVS_AFXDP_FLOW_COMPOSE_CSUM=0
    afxdp_ovs_compose=no
  fi
  AC_MSG_RESULT([$afxdp_ovs_compose])
  AC_SUBST([OVS_AFXDP_FLOW_COMPOSE_CSUM])

  dnl The flow offload API (for the XDP fast path): the netdev flow API
  dnl up to 3.6, dpif-offload provider classes from 3.7.
  dnl Our provider is built for either: a patch lists our dpif-offload
  dnl class in OVS's table; one keeps TC's netdev flow API off our ports.
  OVS_AFXDP_NETDEV_FLOW_API=0
  OVS_AFXDP_DPIF_OFFLOAD=0
  if test -f $afxdp_probe/lib/dpif-offload-provider.h; then
    afxdp_ovs_offload="dpif-offload providers"
    OVS_AFXDP_DPIF_OFFLOAD=1
    OVS_PATCHES_APPLIED="$OVS_PATCHES_APPLIED
      ovs-patches/dpif-offload-afxdp-class.patch"
    OVS_PATCHES_APPLIED=`echo $OVS_PATCHES_APPLIED`
  elif test -f $afxdp_probe/lib/netdev-offload-provider.h \
       && ! AFXDP_OVS_GREP([lib/dpif-netdev-private-flow.h],
                           [struct dp_netdev_flow_stats last_stats;]); then
    dnl Without it the offload's counts cannot be told to each copy of a
    dnl megaflow once (netdev-afxdp-compat.h's afxdp_ovs_flow_told()).
    afxdp_ovs_offload="none: no last_stats in struct dp_netdev_flow"
  elif test -f $afxdp_probe/lib/netdev-offload-provider.h; then
    afxdp_ovs_offload="netdev flow API"
    OVS_AFXDP_NETDEV_FLOW_API=1
    OVS_PATCHES_APPLIED="$OVS_PATCHES_APPLIED
      ovs-patches/netdev-offload-tc-skip-afxdp.patch"
    OVS_PATCHES_APPLIED=`echo $OVS_PATCHES_APPLIED`
  else
    afxdp_ovs_offload="none found"
  fi
  AC_SUBST([OVS_AFXDP_NETDEV_FLOW_API])
  AC_SUBST([OVS_AFXDP_DPIF_OFFLOAD])
  rm -rf $afxdp_probe
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

dnl AFXDP_CHECK_BPF_CLANG: a clang that compiles BPF programs in C
dnl (lib/afxdp/fastpath.bpf.c, the XDP fast path's program, built into the
dnl core), with the kernel's and libbpf's headers.  Set BPF_CLANG to
dnl choose it, or BPF_CLANG=no to do without (the fast path then says it
dnl was not built, and its tests skip and say why).
AC_DEFUN([AFXDP_CHECK_BPF_CLANG], [
  AC_ARG_VAR([BPF_CLANG],
             [clang for BPF programs (default: the first clang found; no: none)])
  if test "x$BPF_CLANG" != xno; then
    AC_CHECK_PROGS([BPF_CLANG],
      [clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14])
  fi
  dnl <linux/types.h> wants <asm/types.h>, which Debian keeps under the
  dnl multiarch directory.
  afxdp_multiarch=`$CC -print-multiarch 2>/dev/null`
  BPF_CFLAGS="-target bpf -O2 -g -ffreestanding -Wall"
  if test -n "$afxdp_multiarch"; then
    BPF_CFLAGS="$BPF_CFLAGS -I/usr/include/$afxdp_multiarch"
  fi
  afxdp_bpf_clang=no
  if test -n "$BPF_CLANG" && test "x$BPF_CLANG" != xno; then
    AC_MSG_CHECKING([whether $BPF_CLANG compiles XDP programs])
    cat > conftest.bpf.c <<CONFTEST
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
SEC("xdp") int f(struct xdp_md *ctx) { return XDP_PASS; }
CONFTEST
    if $BPF_CLANG $BPF_CFLAGS -c -o conftest.bpf.o conftest.bpf.c \
         >&AS_MESSAGE_LOG_FD 2>&1; then
      afxdp_bpf_clang=yes
    fi
    rm -f conftest.bpf.c conftest.bpf.o
    AC_MSG_RESULT([$afxdp_bpf_clang])
  fi
  afxdp_bpf_clang_summary=$afxdp_bpf_clang
  if test $afxdp_bpf_clang = yes; then
    afxdp_bpf_clang_summary="yes ($BPF_CLANG)"
  fi
  AC_SUBST([BPF_CFLAGS])
  AM_CONDITIONAL([HAVE_BPF_CLANG], [test $afxdp_bpf_clang = yes])
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
  Open vSwitch version: $OVS_VERSION
    afxdp get_status:   $afxdp_ovs_get_status in OVS (else patched in)
    afxdp .init:        $afxdp_ovs_init in OVS (ours runs from construct)
    use-need-wakeup:    $afxdp_ovs_need_wakeup in OVS's C port (ours: always)
    growing batches:    $afxdp_ovs_batches
    flow offload API:   $afxdp_ovs_offload
    patches applied:    $OVS_PATCHES_APPLIED
    its python3:        $OVS_PYTHON3
  xsk.h:                $afxdp_xsk_header ($XSK_LIBS)
  need_wakeup:          $afxdp_need_wakeup (library: $afxdp_lib_need_wakeup, kernel headers: $afxdp_kernel_need_wakeup, requested: $enable_need_wakeup)
  C++ compiler:         $CXX (C++17)
  GoogleTest:           $afxdp_gtest
  sanitizers:           $enable_sanitizers
  frame debug:          $enable_frame_debug
  libFuzzer:            $afxdp_fuzzer_summary
  BPF programs in C:    $afxdp_bpf_clang_summary
SUMMARY
])
