// Tier 1 (no kernel): megaflows into XDP flows (flow.hh).
//
// translate() must yield a redirect only where OVS would send the packet
// to exactly that one port with exactly those rewrites, and otherwise the
// socket (with the reason) or, for a match it cannot evaluate, nothing.
// FlowTable must hold what the program's maps can hold: masks shared and
// freed by count, both limits enforced without changing the table, and
// lookups that find the flow whose masked key the packet has.

#include <arpa/inet.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "flow.hh"
#include "marks.hh"

using afxdp::FlowTable;
using afxdp::Translation;
using afxdp::Verdict;
using afxdp::VlanOp;
using afxdp::XdpFlow;

namespace {

// Megaflows as OVS's learning switch makes them: in_port (implicit),
// dl_dst and dl_type exact, VLAN exact (absent, or tag 'vid').
afxdp_flow_match
l2_match(int vid = -1)
{
    afxdp_flow_match m{};
    const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 0x02};
    std::memcpy(m.key.dl_dst, dst, 6);
    std::memset(m.mask.dl_dst, 0xff, 6);
    m.key.dl_type = htons(0x0800);
    m.mask.dl_type = 0xffff;
    m.key.vlan_tci = vid < 0 ? 0 : htons(0x1000 | vid);
    m.mask.vlan_tci = htons(0x1fff);
    return m;
}

afxdp_flow_action
output(int ifindex, bool xdp_target = true)
{
    afxdp_flow_action a{};
    a.type = AFXDP_ACTION_OUTPUT;
    a.output.ifindex = ifindex;
    a.output.xdp_target = xdp_target;
    a.output.name = "p";
    return a;
}

afxdp_flow_action
push_vlan(uint16_t vid, uint16_t tpid = 0x8100)
{
    afxdp_flow_action a{};
    a.type = AFXDP_ACTION_PUSH_VLAN;
    a.push_vlan.tpid = tpid;
    a.push_vlan.tci = 0x1000 | vid;   // OVS sets CFI in the action.
    return a;
}

afxdp_flow_action
simple(afxdp_flow_action_type type, const char *other = nullptr)
{
    afxdp_flow_action a{};
    a.type = type;
    if (type == AFXDP_ACTION_OTHER) {
        a.other = other;
    }
    return a;
}

afxdp_flow_action
set_dst(uint8_t last)
{
    afxdp_flow_action a{};
    a.type = AFXDP_ACTION_SET_ETH;
    const uint8_t dst[6] = {0x02, 0xaa, 0, 0, 0, last};
    std::memcpy(a.set_eth.dst, dst, 6);
    std::memset(a.set_eth.dst_mask, 0xff, 6);
    return a;
}

Translation
run(const afxdp_flow_match &m, std::vector<afxdp_flow_action> acts)
{
    return afxdp::translate(m, acts.data(), acts.size(), 7);
}

}  // namespace

TEST(Flow, KeyLayoutIsTheProgramsAndHasNoHoles)
{
    EXPECT_EQ(sizeof(afxdp_flow_key), 80u);
    EXPECT_EQ(offsetof(afxdp_flow_key, nw_src), 16u);
    EXPECT_EQ(offsetof(afxdp_flow_key, ipv6_label), 48u);
    EXPECT_EQ(offsetof(afxdp_flow_key, tp_src), 56u);
    EXPECT_EQ(offsetof(afxdp_flow_key, tcp_flags), 72u);
    EXPECT_EQ(offsetof(afxdp_flow_key, vlan_tpid), 74u);
}

TEST(Flow, OneOutputIsARedirectWithTheMaskedKey)
{
    afxdp_flow_match m = l2_match();
    m.key.nw_ttl = 64;   // Not in the mask: must not reach the key.
    Translation t = run(m, {output(5)});
    ASSERT_TRUE(t.full());
    EXPECT_EQ(t.flow.verdict, Verdict::kRedirect);
    EXPECT_EQ(t.flow.ifindex, 5);
    EXPECT_EQ(t.flow.vlan, VlanOp::kNone);
    EXPECT_EQ(t.flow.key.nw_ttl, 0);
    EXPECT_EQ(t.flow.key.dl_type, htons(0x0800));
    EXPECT_EQ(t.flow.mark, 7u);
    EXPECT_TRUE(afxdp::key_equal(t.flow.key,
                                 afxdp::masked(t.flow.key, t.flow.mask)));
}

TEST(Flow, NoActionsOrAnExplicitDropIsADrop)
{
    EXPECT_EQ(run(l2_match(), {}).flow.verdict, Verdict::kDrop);
    Translation t = run(l2_match(), {simple(AFXDP_ACTION_DROP)});
    EXPECT_TRUE(t.full());
    EXPECT_EQ(t.flow.verdict, Verdict::kDrop);
    // Nothing may follow a drop.
    t = run(l2_match(), {simple(AFXDP_ACTION_DROP), output(5)});
    EXPECT_EQ(t.refusal, AFXDP_REFUSED_after_drop);
}

TEST(Flow, AMatchOnAFieldXdpDoesNotParseIsNotOffloadedAtAll)
{
    afxdp_flow_match m = l2_match();
    m.unparsed_field = "ct_state";
    Translation t = run(m, {output(5)});
    EXPECT_FALSE(t.offloadable());
    EXPECT_EQ(t.refusal, AFXDP_REFUSED_match_field);
    EXPECT_STREQ(t.detail, "ct_state");
}

TEST(Flow, WhatXdpCannotDoExactlyGoesToTheSocketWithItsMark)
{
    struct Case {
        std::vector<afxdp_flow_action> actions;
        afxdp_offload_refusal why;
    } cases[] = {
        // A flood: NORMAL to an unknown address.
        {{output(5), output(6)}, AFXDP_REFUSED_several_outputs},
        // The bridge's internal port, a tap: not an XDP target.
        {{output(9, false)}, AFXDP_REFUSED_output_target},
        {{simple(AFXDP_ACTION_OTHER, "ct"), output(5)},
         AFXDP_REFUSED_action},
        // A side effect after the output still counts.
        {{output(5), simple(AFXDP_ACTION_OTHER, "userspace")},
         AFXDP_REFUSED_action},
        // Two tags.
        {{push_vlan(10), push_vlan(20), output(5)}, AFXDP_REFUSED_vlan},
        // A pop on a packet the match says is untagged.
        {{simple(AFXDP_ACTION_POP_VLAN), output(5)}, AFXDP_REFUSED_vlan},
        // An unknown TPID.
        {{push_vlan(10, 0x9100), output(5)}, AFXDP_REFUSED_vlan},
    };
    for (const Case &c : cases) {
        Translation t = run(l2_match(), c.actions);
        EXPECT_TRUE(t.offloadable());
        EXPECT_FALSE(t.full());
        EXPECT_EQ(t.refusal, c.why) << afxdp_offload_refusal_name(c.why);
        EXPECT_EQ(t.flow.verdict, Verdict::kToSocket);
        EXPECT_EQ(t.flow.refusal, c.why);
        EXPECT_EQ(t.flow.mark, 7u);
    }
}

TEST(Flow, AnIpv6SetTakesAddressesAndALabelOfItsTwentyBits)
{
    // IPv6 NAT: the addresses and label as OVS's set holds them, value
    // and mask; a label value past its 20 bits (OVS would or it into the
    // traffic class) stays with OVS.
    afxdp_flow_match m = l2_match();
    m.key.dl_type = htons(0x86dd);
    afxdp_flow_action set{};
    set.type = AFXDP_ACTION_SET_IP;
    set.set_ip.version = 6;
    set.set_ip.src6[0] = 0xfd;
    set.set_ip.src6[15] = 1;
    std::memset(set.set_ip.src6_mask, 0xff, 16);
    set.set_ip.dst6[0] = 0x20;
    std::memset(set.set_ip.dst6_mask, 0xff, 8);
    set.set_ip.label = htonl(0xfffff);
    set.set_ip.label_mask = htonl(0xff00f);
    Translation t = run(m, {set, output(5)});
    ASSERT_TRUE(t.full()) << (t.detail ? t.detail : "");
    EXPECT_EQ(t.flow.set_ip, 6);
    EXPECT_EQ(std::memcmp(t.flow.ipv6_src.data(), set.set_ip.src6, 16), 0);
    EXPECT_EQ(std::memcmp(t.flow.ipv6_src_mask.data(),
                          set.set_ip.src6_mask, 16), 0);
    EXPECT_EQ(std::memcmp(t.flow.ipv6_dst.data(), set.set_ip.dst6, 16), 0);
    EXPECT_EQ(std::memcmp(t.flow.ipv6_dst_mask.data(),
                          set.set_ip.dst6_mask, 16), 0);
    EXPECT_EQ(t.flow.ipv6_label, htonl(0xfffff));
    EXPECT_EQ(t.flow.ipv6_label_mask, htonl(0xff00f));

    set.set_ip.label = htonl(0x100000);
    t = run(m, {set, output(5)});
    EXPECT_EQ(t.refusal, AFXDP_REFUSED_action);
    EXPECT_STREQ(t.detail, "set of an IPv6 flow label past 20 bits");

    // On a match that leaves the version open, or pins IPv4: OVS would
    // write where an IPv6 header would be.
    set.set_ip.label = 0;
    m.key.dl_type = htons(0x0800);
    EXPECT_EQ(run(m, {set, output(5)}).refusal, AFXDP_REFUSED_action);
    m.mask.dl_type = 0;
    m.key.dl_type = 0;
    EXPECT_EQ(run(m, {set, output(5)}).refusal, AFXDP_REFUSED_action);
}

TEST(Flow, VlanPushAndPopNeedTheMatchToSayWhetherTheresATag)
{
    // The match leaves the tag open: neither push nor pop is exact.
    afxdp_flow_match open = l2_match();
    open.mask.vlan_tci = 0;
    EXPECT_EQ(run(open, {push_vlan(10), output(5)}).refusal,
              AFXDP_REFUSED_vlan);
    EXPECT_EQ(run(open, {simple(AFXDP_ACTION_POP_VLAN), output(5)}).refusal,
              AFXDP_REFUSED_vlan);
    // Only the VID masked, CFI open: still open.
    open.mask.vlan_tci = htons(0x0fff);
    EXPECT_EQ(run(open, {push_vlan(10), output(5)}).refusal,
              AFXDP_REFUSED_vlan);

    // Untagged in: push, with CFI dropped from the TCI.
    Translation t = run(l2_match(), {push_vlan(0x2000 | 10), output(5)});
    ASSERT_TRUE(t.full());
    EXPECT_EQ(t.flow.vlan, VlanOp::kPush);
    EXPECT_EQ(t.flow.tpid, 0x8100);
    EXPECT_EQ(t.flow.tci, 0x2000 | 10);

    // Tagged in: pop; pop then push replaces; push then pop is nothing.
    t = run(l2_match(10), {simple(AFXDP_ACTION_POP_VLAN), output(5)});
    ASSERT_TRUE(t.full());
    EXPECT_EQ(t.flow.vlan, VlanOp::kPop);
    t = run(l2_match(10),
            {simple(AFXDP_ACTION_POP_VLAN), push_vlan(20, 0x88a8), output(5)});
    ASSERT_TRUE(t.full());
    EXPECT_EQ(t.flow.vlan, VlanOp::kReplace);
    EXPECT_EQ(t.flow.tpid, 0x88a8);
    EXPECT_EQ(t.flow.tci, 20);
    t = run(l2_match(), {push_vlan(10), simple(AFXDP_ACTION_POP_VLAN),
                         output(5)});
    ASSERT_TRUE(t.full());
    EXPECT_EQ(t.flow.vlan, VlanOp::kNone);
}

TEST(Flow, RewritesBeforeTheOutputApplyAndAfterItDoNot)
{
    Translation t = run(l2_match(), {set_dst(1), set_dst(2), output(5),
                                     set_dst(3), push_vlan(4)});
    ASSERT_TRUE(t.full());
    EXPECT_EQ(t.flow.eth_dst[5], 2);   // The later of the two before.
    EXPECT_EQ(t.flow.eth_dst_mask[0], 0xff);
    EXPECT_EQ(t.flow.eth_src_mask[0], 0);
    EXPECT_EQ(t.flow.vlan, VlanOp::kNone);

    // A partial mask keeps the other bits of an earlier set.
    afxdp_flow_action half = set_dst(0x0f);
    std::memset(half.set_eth.dst_mask, 0, 6);
    half.set_eth.dst_mask[5] = 0x0f;
    half.set_eth.dst[5] = 0x05;
    t = run(l2_match(), {set_dst(0xf0), half, output(5)});
    ASSERT_TRUE(t.full());
    EXPECT_EQ(t.flow.eth_dst[5], 0xf5);

    // OVS writes key | (old & ~mask): a key bit outside the mask (a flow
    // put with dpctl) is set too.
    afxdp_flow_action wide = half;
    wide.set_eth.dst[5] = 0xff;
    t = run(l2_match(), {set_dst(0x00), wide, output(5)});
    ASSERT_TRUE(t.full());
    EXPECT_EQ(t.flow.eth_dst[5], 0xff);
    EXPECT_EQ(t.flow.eth_dst_mask[5], 0xff);
}

namespace {

std::array<uint32_t, 4>
ufid(uint32_t n)
{
    return {n, 0, 0, n};
}

XdpFlow
flow_for_dst(uint8_t last, uint16_t dst_mask_bits = 0xffff)
{
    afxdp_flow_match m = l2_match();
    m.key.dl_dst[5] = last;
    m.mask.tp_dst = dst_mask_bits;
    afxdp_flow_action out = output(5);
    return afxdp::translate(m, &out, 1, last).flow;
}

}  // namespace

TEST(FlowTable, FlowsShareMasksAndTheLastOneOutFreesIt)
{
    FlowTable table;
    ASSERT_EQ(table.put(ufid(1), flow_for_dst(1)), 0);
    ASSERT_EQ(table.put(ufid(2), flow_for_dst(2)), 0);
    ASSERT_EQ(table.put(ufid(3), flow_for_dst(3, 0xff00)), 0);
    EXPECT_EQ(table.n_flows(), 3u);
    EXPECT_EQ(table.n_masks(), 2u);

    // Replacing a flow with one of another mask moves its reference.
    ASSERT_EQ(table.put(ufid(1), flow_for_dst(1, 0xff00)), 0);
    EXPECT_EQ(table.n_masks(), 2u);
    ASSERT_EQ(table.del(ufid(2)), 0);
    EXPECT_EQ(table.n_masks(), 1u);
    EXPECT_EQ(table.del(ufid(2)), -ENOENT);
    ASSERT_EQ(table.del(ufid(1)), 0);
    ASSERT_EQ(table.del(ufid(3)), 0);
    EXPECT_EQ(table.n_masks(), 0u);
    EXPECT_EQ(table.n_flows(), 0u);
}

TEST(FlowTable, SlotsKeepTheirNumbersWhileInUse)
{
    // The program's entries name their mask slot and counter slot: those
    // never move under a flow, and free ones are taken again.
    FlowTable table;
    ASSERT_EQ(table.put(ufid(1), flow_for_dst(1, 0xffff)), 0);
    ASSERT_EQ(table.put(ufid(2), flow_for_dst(2, 0xff00)), 0);
    ASSERT_EQ(table.put(ufid(3), flow_for_dst(3, 0x00ff)), 0);
    EXPECT_EQ(table.entry(ufid(3))->mask_slot, 2u);
    EXPECT_EQ(table.mask_slots(), 3u);
    uint32_t counters3 = table.entry(ufid(3))->stats_slot;

    ASSERT_EQ(table.del(ufid(1)), 0);
    EXPECT_EQ(table.mask_at(0), nullptr);
    EXPECT_EQ(table.entry(ufid(3))->mask_slot, 2u);
    EXPECT_EQ(table.entry(ufid(3))->stats_slot, counters3);
    EXPECT_EQ(table.mask_slots(), 3u);
    ASSERT_EQ(table.del(ufid(3)), 0);
    EXPECT_EQ(table.mask_slots(), 2u);

    // A new mask takes the lowest free slot; a new flow a counter never
    // used (a packet in flight may still count in one just freed).
    ASSERT_EQ(table.put(ufid(4), flow_for_dst(4, 0x0f0f)), 0);
    EXPECT_EQ(table.entry(ufid(4))->mask_slot, 0u);
    EXPECT_EQ(table.entry(ufid(4))->stats_slot, 3u);
    EXPECT_NE(table.entry(ufid(4))->stats_slot, counters3);
    // A flow replaced keeps its counters, under any mask.
    uint32_t counters2 = table.entry(ufid(2))->stats_slot;
    ASSERT_EQ(table.put(ufid(2), flow_for_dst(2, 0x0f0f)), 0);
    EXPECT_EQ(table.entry(ufid(2))->mask_slot, 0u);
    EXPECT_EQ(table.entry(ufid(2))->stats_slot, counters2);
    EXPECT_EQ(table.mask_at(1), nullptr);
    EXPECT_EQ(table.n_masks(), 1u);
}

TEST(FlowTable, OneEntryPerMaskedKey)
{
    // The program's map holds one entry per mask and masked key: a second
    // flow with both the same is refused, and the first stays.
    FlowTable table;
    ASSERT_EQ(table.put(ufid(1), flow_for_dst(1)), 0);
    XdpFlow same = flow_for_dst(1);
    same.mark = 99;
    EXPECT_EQ(table.put(ufid(2), same), -EEXIST);
    EXPECT_EQ(table.n_flows(), 1u);
    EXPECT_EQ(table.find(ufid(2)), nullptr);
    // The same flow put again (a modification) replaces itself.
    EXPECT_EQ(table.put(ufid(1), same), 0);
    EXPECT_EQ(table.find(ufid(1))->mark, 99u);
}

TEST(FlowTable, OneEntryPerMaskedKeyHash)
{
    // The program's map is keyed by the masked key's hash: of two keys of
    // one mask with the same hash, the second is refused.  Such a pair,
    // built from the hash's definition (a sum of each word times its
    // own odd constant, then mixed): the first word differs by d, and the
    // second by what cancels d times the first constant in the sum.
    auto inverse = [](uint64_t odd) {
        uint64_t x = odd;            // Right in 3 bits; each step doubles.
        for (int i = 0; i < 5; i++) {
            x *= 2 - odd * x;
        }
        return x;
    };
    XdpFlow a = flow_for_dst(1);
    std::memset(&a.mask, 0xff, 16);     // Words 0 and 1 matched exactly.
    XdpFlow b = a;
    uint64_t wa[2], wb[2];
    std::memcpy(wa, &a.key, sizeof wa);
    const uint64_t d = 1;
    wb[0] = wa[0] + d;
    wb[1] = wa[1] - d * AFXDP_FP_HASH_MUL(0) * inverse(AFXDP_FP_HASH_MUL(1));
    std::memcpy(&b.key, wb, sizeof wb);
    b.mark = 2;
    ASSERT_FALSE(afxdp::key_equal(a.key, b.key));
    ASSERT_EQ(afxdp::fp_key_hash(a.key), afxdp::fp_key_hash(b.key));

    FlowTable table;
    ASSERT_EQ(table.put(ufid(1), a), 0);
    EXPECT_EQ(table.put(ufid(2), b), -EEXIST);
    EXPECT_EQ(table.find(ufid(2)), nullptr);
    // Under another mask the same key is another map entry.
    b.mask.nw_ttl = 0xff;
    EXPECT_EQ(table.put(ufid(2), b), 0);
    // And keys of one mask that differ in one word never collide.
    XdpFlow c = a;
    c.key.dl_dst[0] ^= 1;
    EXPECT_NE(afxdp::fp_key_hash(a.key), afxdp::fp_key_hash(c.key));
    EXPECT_EQ(table.put(ufid(3), c), 0);
}

TEST(FlowTable, LookupFindsTheFlowWhoseMaskedKeyThePacketHas)
{
    FlowTable table;
    ASSERT_EQ(table.put(ufid(1), flow_for_dst(1)), 0);
    ASSERT_EQ(table.put(ufid(2), flow_for_dst(2, 0)), 0);

    afxdp_flow_key packet = l2_match().key;
    packet.dl_dst[5] = 2;
    packet.nw_ttl = 63;                 // Wildcarded by every flow.
    packet.tp_dst = htons(80);
    const XdpFlow *f = table.lookup(packet);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->mark, 2u);
    packet.dl_dst[5] = 1;
    EXPECT_EQ(table.lookup(packet), nullptr);   // Flow 1 wants tp_dst 0.
    packet.tp_dst = 0;
    ASSERT_NE(table.lookup(packet), nullptr);
    EXPECT_EQ(table.lookup(packet)->mark, 1u);
    packet.vlan_tci = htons(0x1000 | 3);        // Tagged: no flow.
    EXPECT_EQ(table.lookup(packet), nullptr);
}

TEST(FlowTable, FullTablesRefuseAndStayAsTheyWere)
{
    FlowTable table;
    for (size_t i = 0; i < FlowTable::kMaxMasks; i++) {
        XdpFlow f = flow_for_dst(1, uint16_t(i + 1));
        ASSERT_EQ(table.put(ufid(uint32_t(i)), f), 0);
    }
    EXPECT_EQ(table.n_masks(), FlowTable::kMaxMasks);
    XdpFlow extra = flow_for_dst(1, 0xabcd);
    EXPECT_EQ(table.put(ufid(1000), extra), -ENOSPC);
    EXPECT_EQ(table.n_flows(), FlowTable::kMaxMasks);
    EXPECT_EQ(table.find(ufid(1000)), nullptr);
    // A flow replaced by one of a new mask frees its own: that fits.
    EXPECT_EQ(table.put(ufid(0), extra), 0);
    EXPECT_EQ(table.n_masks(), FlowTable::kMaxMasks);

    FlowTable big;
    for (uint32_t i = 0; i < FlowTable::kMaxFlows; i++) {
        XdpFlow f = flow_for_dst(1);
        f.key.nw_src[0] = uint8_t(i);
        f.key.nw_src[1] = uint8_t(i >> 8);
        ASSERT_EQ(big.put(ufid(i), f), 0);
    }
    EXPECT_EQ(big.put(ufid(1u << 20), flow_for_dst(2)), -ENOSPC);
    EXPECT_EQ(big.n_flows(), FlowTable::kMaxFlows);
    // Replacing one that is there needs no new entry.
    EXPECT_EQ(big.put(ufid(5), flow_for_dst(2)), 0);
    // Every counter slot used once: new flows take the freed ones, the
    // longest freed first.
    uint32_t first = big.entry(ufid(7))->stats_slot;
    uint32_t second = big.entry(ufid(9))->stats_slot;
    ASSERT_EQ(big.del(ufid(7)), 0);
    ASSERT_EQ(big.del(ufid(9)), 0);
    ASSERT_EQ(big.put(ufid(1u << 21), flow_for_dst(3)), 0);
    EXPECT_EQ(big.entry(ufid(1u << 21))->stats_slot, first);
    ASSERT_EQ(big.put(ufid(1u << 22), flow_for_dst(4)), 0);
    EXPECT_EQ(big.entry(ufid(1u << 22))->stats_slot, second);
}

TEST(Flow, EveryRefusalHasANameAndASentence)
{
    for (int r = 0; r < AFXDP_REFUSED_N; r++) {
        auto why = static_cast<afxdp_offload_refusal>(r);
        EXPECT_STRNE(afxdp_offload_refusal_name(why), "none");
        EXPECT_STRNE(afxdp_offload_refusal_text(why), "offloaded");
    }
    EXPECT_STREQ(afxdp_offload_refusal_name(AFXDP_REFUSED_N), "none");
}

// describe() shows the key as the maps hold it (masked: only what the
// mask touches, a partial mask after '/') and what XDP does with it.
TEST(Flow, DescribeShowsTheMaskedKeyAndTheVerdict)
{
    afxdp_flow_match m = l2_match(10);
    m.key.nw_ttl = 64;                        // Not in the mask: not shown.
    const uint8_t dst[4] = {10, 0, 0, 2}, prefix[4] = {255, 255, 255, 0};
    std::memcpy(m.key.nw_dst, dst, 4);
    std::memcpy(m.mask.nw_dst, prefix, 4);
    EXPECT_EQ(afxdp::describe(run(m, {simple(AFXDP_ACTION_POP_VLAN),
                                      output(5)})),
              "dl_dst=02:00:00:00:00:02 dl_type=0x800 vlan_tci=0x100a/0x1fff "
              "nw_dst=10.0.0.0/255.255.255.0 -> redirect(ifindex=5,pop_vlan)");
    EXPECT_EQ(afxdp::describe(run(l2_match(), {simple(AFXDP_ACTION_DROP)})),
              "dl_dst=02:00:00:00:00:02 dl_type=0x800 vlan_tci=0/0x1fff "
              "-> drop");
    EXPECT_EQ(afxdp::describe(run(l2_match(), {set_dst(9), output(5)})),
              "dl_dst=02:00:00:00:00:02 dl_type=0x800 vlan_tci=0/0x1fff "
              "-> redirect(ifindex=5,eth_dst=02:aa:00:00:00:09)");
    EXPECT_EQ(afxdp::describe(run(l2_match(),
                                  {simple(AFXDP_ACTION_OTHER, "ct")})),
              "dl_dst=02:00:00:00:00:02 dl_type=0x800 vlan_tci=0/0x1fff "
              "-> ovs(action: ct)");
}

TEST(Flow, DescribeThroughTheCApiReturnsTheRefusalAndCutsSafely)
{
    afxdp_flow_match m = l2_match();
    afxdp_flow_action out = output(5, false);
    char buf[256];
    EXPECT_EQ(afxdp_flow_describe(&m, &out, 1, buf, sizeof buf),
              AFXDP_REFUSED_output_target);
    EXPECT_STREQ(buf, "dl_dst=02:00:00:00:00:02 dl_type=0x800 "
                      "vlan_tci=0/0x1fff -> ovs(output_target: p)");
    out = output(5);
    EXPECT_EQ(afxdp_flow_describe(&m, &out, 1, buf, sizeof buf),
              AFXDP_REFUSED_N);
    char tiny[8];
    std::memset(tiny, 'x', sizeof tiny);
    afxdp_flow_describe(&m, &out, 1, tiny, sizeof tiny);
    EXPECT_STREQ(tiny, "dl_dst=");
    EXPECT_EQ(afxdp_flow_describe(&m, &out, 1, nullptr, 0), AFXDP_REFUSED_N);
}

// FlowMarks (marks.hh): a wire mark is OVS's mark only while its flow is
// still the one in its slot.
TEST(FlowMarks, AWireMarkStandsForItsFlowOnly)
{
    afxdp::FlowMarks marks;
    uint32_t mark = 0;
    const uint32_t a = marks.give(5, 77);
    ASSERT_TRUE(marks.find(a, &mark));
    EXPECT_EQ(mark, 77u);
    // Put again with the same mark: the same wire mark.
    EXPECT_EQ(marks.give(5, 77), a);
    // Another slot, the same mark: another wire mark.
    const uint32_t b = marks.give(6, 77);
    EXPECT_NE(b, a);
    // The flow leaves, and the next flow in its slot takes mark 77 again:
    // the old wire mark is stale, the new one is not.
    marks.take(5);
    EXPECT_FALSE(marks.find(a, &mark));
    const uint32_t c = marks.give(5, 77);
    EXPECT_NE(c, a);
    EXPECT_FALSE(marks.find(a, &mark));
    EXPECT_TRUE(marks.find(c, &mark));
    // A new mark for a flow put again: a new wire mark as well.
    const uint32_t d = marks.give(5, 78);
    EXPECT_FALSE(marks.find(c, &mark));
    ASSERT_TRUE(marks.find(d, &mark));
    EXPECT_EQ(mark, 78u);
    marks.take_all();
    EXPECT_FALSE(marks.find(b, &mark));
    EXPECT_FALSE(marks.find(d, &mark));
}

TEST(FlowMarks, AWireMarkComesBackOnlyAfterItsSlotWasGivenEveryGeneration)
{
    afxdp::FlowMarks marks;
    uint32_t mark;
    const uint32_t first = marks.give(9, 1);
    const uint32_t round = 1u << afxdp::FlowMarks::kGenerationBits;
    for (uint32_t i = 1; i < round; i++) {
        marks.take(9);
        ASSERT_NE(marks.give(9, 1), first) << i;
    }
    marks.take(9);
    EXPECT_EQ(marks.give(9, 1), first);
    EXPECT_TRUE(marks.find(first, &mark));
}
