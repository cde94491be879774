// afxdp-tc-vlan IFNAME VID | IFNAME off
//
// Makes IFNAME a sender whose VLAN tag VID is offloaded (kept outside the
// frame, as with `txvlan on`), and takes any tag off what it receives:
// see tests/unit/tc-vlan.hh.  "off" removes that again.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "unit/tc-vlan.hh"

int
main(int argc, char *argv[])
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s IFNAME VID|off\n", argv[0]);
        return 2;
    }
    std::string err;
    if (!std::strcmp(argv[2], "off")) {
        err = afxdp_test::tc_vlan_detach(argv[1]);
    } else {
        char *end;
        unsigned long vid = std::strtoul(argv[2], &end, 10);
        if (*end || !argv[2][0] || vid > 4095) {
            std::fprintf(stderr, "%s: VID must be 0 to 4095\n", argv[0]);
            return 2;
        }
        err = afxdp_test::tc_vlan_attach(argv[1], uint16_t(vid));
    }
    if (!err.empty()) {
        std::fprintf(stderr, "%s: %s: %s\n", argv[0], argv[1], err.c_str());
        return 1;
    }
    return 0;
}
