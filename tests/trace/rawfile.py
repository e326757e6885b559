"""rawfile.py - the tracer's raw files (src/util/record.h) written and read back by hand, for the
tests that give `hclock trace --convert` records whose every time and bound they know
(waits_raw_test.py, reorder_test.py). Times are ns after T0 (the job's origin); the files
hold them absolute."""
import struct

REC = struct.Struct("<BBHiiIQqqqqQ")  # kind flags func peer tag tid comm t_g t_l t2_g t2_l bytes
CALL, SEND, RECV, COLL, DROP, BOUND = 1, 2, 3, 4, 5, 6
F_NB, F_CUT, F_STOP, F_TID, F_HW = 1, 2, 4, 8, 16
HW_NONE = 255
T0 = 1_700_000_000_000_000_000
HEADER = 320
_OCTAVE = [65536, 71468, 77936, 84990, 92682, 101071, 110218, 120194]


def hw_ns(c):
    """record.c's rec_hw_ns: the value of a half-width code, ns (None: not known)"""
    if c == HW_NONE:
        return None
    if c == 0:
        return 0
    e, k = divmod(c - 1, 8)
    return ((1 << e) * _OCTAVE[k] + 0xFFFF) >> 16


def hw_code(ns):
    """record.c's rec_hw_code: the smallest code whose value is >= ns"""
    return next(c for c in range(HW_NONE) if hw_ns(c) >= ns)


def hw_pack(codes):
    """REC_F_HW's tag from its four codes (enter below, enter above, leave below, leave
    above), as the signed int32 the record holds"""
    u = codes[0] | codes[1] << 8 | codes[2] << 16 | codes[3] << 24
    return struct.unpack("<i", struct.pack("<I", u))[0]


def hw_codes(tag):
    u = struct.unpack("<I", struct.pack("<i", tag))[0]
    return [(u >> (8 * i)) & 0xFF for i in range(4)]


class Raw:
    """records of a trace whose functions are FUNCS (their indexes in the header's list);
    local: every local time (t_l, t2_l) its global time minus 7 ns, else 0"""

    def __init__(self, funcs, local=False):
        self.funcs = list(funcs)
        self.local = local

    def _l(self, t):
        return T0 + t - 7 if self.local else 0

    def header(self, rank, size):
        names = b"".join(n.encode() + b"\0" for n in self.funcs)
        names += b"\0" * (-len(names) % 8)
        h = struct.pack("<8siiII192s64sqqIIqq", b"HCLKTRC1", rank, size, len(self.funcs),
                        len(names), b"test", b"test", 0, T0, 0, 0, 0, 0)
        assert len(h) == HEADER
        return h + names

    @staticmethod
    def trailer(nrec, size):
        t = struct.pack("<8sQQqifddIHH", b"HCLKEND1", nrec, 0, 0, 0, float("nan"),
                        float("nan"), float("nan"), 1, 0, 0)
        comm = struct.pack("<Qii", 0, size, 0) + struct.pack("<%di" % size, *range(size))
        comm += b"\0" * (-len(comm) % 8)
        return t + comm

    def call(self, func, t_enter, t_leave, hw, tid=0, kind=CALL, peer=-1):
        """a call record; hw: the half-width of each of its four bounds, ns (None: no
        bounds)"""
        flags, tag = 0, 0
        if hw is not None:
            flags, tag = F_HW, hw_pack([hw_code(hw)] * 4)
        return REC.pack(kind, flags, self.funcs.index(func), peer, tag, tid, 0, T0 + t_enter,
                        self._l(t_enter), T0 + t_leave, self._l(t_leave), 0)

    def coll(self, func, t_enter, t_leave, hw, root=-1, tid=0):
        """a blocking collective's record"""
        return self.call(func, t_enter, t_leave, hw, tid, COLL, root)

    def nbcoll(self, func, t_start, t_done, tid=0, start_tid=0):
        """a nonblocking collective's record, made where it completed"""
        return REC.pack(COLL, F_NB | F_TID, self.funcs.index(func), -1, start_tid, tid, 0,
                        T0 + t_start, self._l(t_start), T0 + t_done, self._l(t_done), 0)

    def msg(self, kind, func, t, peer, tag=5, bound=None, tid=0):
        """a send's or a receive's record; bound: the latest (send) or earliest (receive)
        time the clock's bounds gave, ns after T0 (None: not known)"""
        b = 0 if bound is None else T0 + bound
        return REC.pack(kind, 0, self.funcs.index(func), peer, tag, tid, 0, T0 + t, self._l(t),
                        b, 0, 8)

    def file(self, rank, size, recs, trailer=True):
        return (self.header(rank, size) + b"".join(recs) +
                (self.trailer(len(recs), size) if trailer else b""))


def records(data):
    """the records of a raw file's bytes, as dicts of REC's fields (up to the trailer)"""
    names = struct.unpack_from("<I", data, 20)[0]
    out, off = [], HEADER + names
    keys = ("kind", "flags", "func", "peer", "tag", "tid", "comm", "t_g", "t_l", "t2_g",
            "t2_l", "bytes")
    while off + REC.size <= len(data) and data[off:off + 8] != b"HCLKEND1":
        out.append(dict(zip(keys, REC.unpack_from(data, off))))
        off += REC.size
    return out
