#!/usr/bin/env python3
"""Build tables/gfx9.tsv from the oracle sweep (tests/golden/<target>.txt).

For each encoding and opcode, the representative probe case (the first one
llvm decodes) gives the mnemonic and the operand list. Each printed operand is
matched back to the instruction field holding the same register number (the
probe gives every field a distinct value), which yields the operand template:

    field:kind:width[:type]

kind: x = operand code (scalar, constant, literal or VGPR), v = VGPR index,
a = AGPR index, k = fixed text (field is the text itself).
type (for operand codes): b32, b64, f16, i16 — how constants print.

Columns: enc op targets mnemonic operands class
The IR class column is the annotation, derived from the mnemonic by the
rules in CLASS_RULES below.
"""

import os
import re
import sys
from collections import OrderedDict

TARGETS = ["gfx908", "gfx90a", "gfx942", "gfx950"]
HERE = os.path.dirname(os.path.abspath(__file__))


def ident(w0):
    """Return (encoding, opcode) of a first dword, or (None, None)."""
    if w0 >> 23 == 0x17F:
        return "SOPP", (w0 >> 16) & 0x7F
    if w0 >> 23 == 0x17E:
        return "SOPC", (w0 >> 16) & 0x7F
    if w0 >> 23 == 0x17D:
        return "SOP1", (w0 >> 8) & 0xFF
    if w0 >> 28 == 0xB:
        return "SOPK", (w0 >> 23) & 0x1F
    if w0 >> 30 == 2:
        return "SOP2", (w0 >> 23) & 0x7F
    if w0 >> 25 == 0x3F:
        return "VOP1", (w0 >> 9) & 0xFF
    if w0 >> 25 == 0x3E:
        return "VOPC", (w0 >> 17) & 0xFF
    if w0 >> 31 == 0:
        return "VOP2", (w0 >> 25) & 0x3F
    top = w0 >> 26
    if top == 0x34:
        if w0 >> 23 == 0x1A7:
            return "VOP3P", (w0 >> 16) & 0x7F
        return "VOP3", (w0 >> 16) & 0x3FF
    if top == 0x30:
        return "SMEM", (w0 >> 18) & 0xFF
    if top == 0x36:
        return "DS", (w0 >> 17) & 0xFF
    if top == 0x37:
        seg = (w0 >> 14) & 3
        return ["FLAT", "SCRATCH", "GLOBAL", "FLAT3"][seg], (w0 >> 18) & 0x7F
    if top == 0x38:
        return "MUBUF", (w0 >> 18) & 0x7F
    if top == 0x3A:
        return "MTBUF", (w0 >> 15) & 0xF
    if top == 0x3C:
        return "MIMG", (w0 >> 18) & 0x7F
    if top == 0x31:
        return "EXP", 0
    if top == 0x35:
        return "VINTRP", (w0 >> 16) & 3
    return None, None


def bits(w, lo, n):
    return (w >> lo) & ((1 << n) - 1)


def fields(enc, words):
    """Register-bearing fields: name -> (kind, value). kind c = operand code, g = VGPR index,
    s2 = SGPR pair base index (value = register number), s4 = SGPR quad base."""
    w0 = words[0]
    w1 = words[1] if len(words) > 1 else 0
    f = {}
    if enc == "SOP2":
        f = {"sdst": ("c", bits(w0, 16, 7)), "ssrc0": ("c", bits(w0, 0, 8)), "ssrc1": ("c", bits(w0, 8, 8))}
    elif enc == "SOPK":
        f = {"sdst": ("c", bits(w0, 16, 7))}
    elif enc == "SOP1":
        f = {"sdst": ("c", bits(w0, 16, 7)), "ssrc0": ("c", bits(w0, 0, 8))}
    elif enc == "SOPC":
        f = {"ssrc0": ("c", bits(w0, 0, 8)), "ssrc1": ("c", bits(w0, 8, 8))}
    elif enc == "SMEM":
        f = {"sdata": ("c", bits(w0, 6, 7)), "sbase": ("s", bits(w0, 0, 6) * 2)}
    elif enc in ("VOP1", "VOP2", "VOPC"):
        f = {"src0": ("c", bits(w0, 0, 9))}
        if enc != "VOPC":
            f["vdst"] = ("g", bits(w0, 17, 8))
        if enc != "VOP1":
            f["vsrc1"] = ("g", bits(w0, 9, 8))
    elif enc in ("VOP3", "VOP3P"):
        f = {"vdst": ("g", bits(w0, 0, 8)), "src0": ("c", bits(w1, 0, 9)),
             "src1": ("c", bits(w1, 9, 9)), "src2": ("c", bits(w1, 18, 9))}
        if enc == "VOP3":
            f["sdst"] = ("c", bits(w0, 8, 7))
    elif enc == "DS":
        f = {"addr": ("g", bits(w1, 0, 8)), "data0": ("g", bits(w1, 8, 8)),
             "data1": ("g", bits(w1, 16, 8)), "vdst": ("g", bits(w1, 24, 8))}
    elif enc in ("FLAT", "SCRATCH", "GLOBAL"):
        f = {"addr": ("g", bits(w1, 0, 8)), "data": ("g", bits(w1, 8, 8)),
             "saddr": ("c", bits(w1, 16, 7)), "vdst": ("g", bits(w1, 24, 8))}
    elif enc in ("MUBUF", "MTBUF", "MIMG"):
        f = {"vaddr": ("g", bits(w1, 0, 8)), "vdata": ("g", bits(w1, 8, 8)),
             "srsrc": ("s", bits(w1, 16, 5) * 4)}
        if enc == "MIMG":
            f["ssamp"] = ("s", bits(w1, 21, 5) * 4)
        else:
            f["soffset"] = ("c", bits(w1, 24, 8))
    return f


REG_RE = re.compile(r"^([vsa])(?:\[(\d+):(\d+)\]|(\d+))$")


def parse_reg(tok):
    m = REG_RE.match(tok)
    if not m:
        return None
    if m.group(4) is not None:
        return m.group(1), int(m.group(4)), 1
    lo, hi = int(m.group(2)), int(m.group(3))
    return m.group(1), lo, hi - lo + 1


def split_operands(text):
    """Split llvm text into (mnemonic, [operands], modifiers-string)."""
    parts = text.split(None, 1)
    mnem = parts[0]
    if len(parts) == 1:
        return mnem, [], ""
    rest = parts[1]
    ops = []
    depth = 0
    cur = ""
    i = 0
    while i < len(rest):
        ch = rest[i]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if depth == 0 and rest.startswith(", ", i):
            ops.append(cur)
            cur = ""
            i += 2
            continue
        if depth == 0 and ch == " ":
            ops.append(cur)
            return mnem, ops, rest[i + 1:]
        cur += ch
        i += 1
    ops.append(cur)
    return mnem, ops, ""


def code_reg(code):
    """Register named by an operand code (kind, index) or None."""
    if code < 102:
        return "s", code
    if code >= 256:
        return "v", code - 256
    return None


def learn_operand(tok, flds, enc):
    """Template element for one printed operand, or None if not understood."""
    r = parse_reg(tok)
    specials = {"vcc": (106, 2), "vcc_lo": (106, 1), "exec": (126, 2), "exec_lo": (126, 1), "m0": (124, 1)}
    if tok in specials:
        code, width = specials[tok]
        for name, (fk, val) in flds.items():
            if fk == "c" and val == code:
                return f"{name}:x:{width}"
    if r is None:
        if tok in ("vcc", "vcc_lo", "exec", "off", "m0", "scc"):
            return f"{tok}:k:0"
        return None
    kind, idx, width = r
    for name, (fk, val) in flds.items():
        if val == 0 and fk != "s":
            continue
        if fk == "g" and idx == val and kind in "va":
            return f"{name}:{kind}:{width}"
        if fk == "g" and idx == val and kind == "s":
            return f"{name}:x:{width}"
        if fk == "c":
            cr = code_reg(val)
            if cr and cr[1] == idx and (cr[0] == kind or (kind == "a" and cr[0] == "v")):
                if kind == "a":
                    return f"{name}:a:{width}"
                return f"{name}:x:{width}"
        if fk == "s" and kind == "s" and idx == val:
            return f"{name}:x:{width}"
    # SMEM / SOP destinations print aligned ranges
    for name, (fk, val) in flds.items():
        if fk == "c" and kind == "s" and 0 < val < 102 and idx == (val & ~(min(width, 4) - 1)):
            return f"{name}:x:{width}"
    return None


CLASS_RULES = [
    # (regex on mnemonic, class); first match wins. Class syntax: fmt.op or other.
    (r"^v_mfma.*_f64|^v_mfma_f64", "f64.matrix"),
    (r"^v_(s)?mfma_f32|^v_smfmac_f32|^v_mfma_scale_f32", "f32.matrix"),
    (r"^v_cmpx?_(class_)?\w*f16", "f16.cmp"),
    (r"^v_cmpx?_(class_)?\w*f32", "f32.cmp"),
    (r"^v_cmpx?_(class_)?\w*f64", "f64.cmp"),
    (r"^v_pk_(fma|mad|fmac)_f16", "f16x2.fma"),
    (r"^v_pk_fma\w*_bf16", "bf16x2.fma"),
    (r"^v_pk_add\w*_bf16", "bf16x2.add"),
    (r"^v_pk_mul\w*_bf16", "bf16x2.mul"),
    (r"^v_pk_(min|max)\w*_bf16", "bf16x2.minmax"),
    (r"^v_dot2c?_f32_(f16|bf16)", "f32.fma"),
    (r"^v_dot2c?_f16_f16", "f16.fma"),
    (r"^v_dot2c?_bf16_bf16", "bf16.fma"),
    (r"^v_fma_mix(lo|hi)_f16", "f16.fma"),
    (r"^v_pk_(add)_f16", "f16x2.add"),
    (r"^v_pk_(mul)_f16", "f16x2.mul"),
    (r"^v_pk_(min|max)\w*_f16", "f16x2.minmax"),
    (r"^v_pk_fma_f32", "f32.fma"),
    (r"^v_pk_add_f32", "f32.add"),
    (r"^v_pk_mul_f32", "f32.mul"),
    (r"^v_(fma|mad|fmac|mac|madmk|madak|fmamk|fmaak)\w*_f16", "f16.fma"),
    (r"^v_(fma|mad|fmac|mac|madmk|madak|fmamk|fmaak)\w*_f32", "f32.fma"),
    (r"^v_(fma|fmac)\w*_f64", "f64.fma"),
    (r"^v_fma_mix", "f32.fma"),
    (r"^v_div_fmas_f(16|32|64)", "f\\1.fma"),
    (r"^v_(add|sub|subrev)_f(16|32|64)", "f\\2.add"),
    (r"^v_(mul|mul_legacy)_f(16|32|64)", "f\\2.mul"),
    (r"^v_(rcp|rcp_iflag|rcp_legacy)_f(16|32|64)", "f\\2.div"),
    (r"^v_div_(scale|fixup)\w*_f(16|32|64)", "f\\2.div"),
    (r"^v_sqrt_f(16|32|64)", "f\\1.sqrt"),
    (r"^v_rsq\w*_f(16|32|64)", "f\\1.rsqrt"),
    (r"^v_(exp|log|sin|cos)\w*_f(16|32|64)", "f\\2.transcendental"),
    (r"^v_(min|max|min3|max3|med3|minimum|maximum|minimum3|maximum3)_f(16|32|64)", "f\\2.minmax"),
    # Floating-point to integer conversions produce no floating-point value:
    # their destination is an integer, so they are "other" (their sources are
    # floating-point, but the IR classes an instruction by what it writes).
    (r"^v_cvt_(flr_|rpi_|norm_|pknorm_|pk_|pkaccum_)?[iu](8|16|32)_f(16|32|64)", "other"),
    (r"^v_cvt_(f16|f32|f64)_", "\\1.conversion"),
    (r"^v_cvt_\w*_(f16|f32|f64)", "\\1.conversion"),
    (r"^v_(ldexp|frexp_mant|fract|trunc|ceil|floor|rndne)_f(16|32|64)", "f\\2.conversion"),
]


def classify(mnem):
    base = re.sub(r"_(e32|e64|dpp|sdwa)$", "", mnem)
    for rx, cls in CLASS_RULES:
        m = re.match(rx, base)
        if m:
            return m.expand(cls)
    return "other"


def load_golden(path):
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            hexw, length, text = line.rstrip("\n").split("\t")
            rows.append(([int(x, 16) for x in hexw.split()], int(length), text))
    return rows


def const_type(tok, width):
    if tok in ("0.15915494309189532",):
        return "b64"
    if tok == "0x3118":
        return "i16"
    return None


def imm_style(enc, valid, pos):
    """How the 16-bit immediate at operand position `pos` prints."""
    toks = []
    for words, _l, text in valid:
        _m, ops, _ = split_operands(text)
        if enc == "SOPK" and "hwreg(" in text:
            return "hwreg"
        if pos < len(ops):
            toks.append((words[0] & 0xFFFF, ops[pos]))
    for v, t in toks:
        for prefix, style in (("sendmsg(", "sendmsg"), ("gpr_idx(", "gpridx")):
            if t.startswith(prefix):
                return style
        if "cnt(" in t:
            return "waitcnt"
    if toks and all(t == str(v) for v, t in toks):
        return "udec"
    return "hex"


COMMENT_RE = re.compile(r"/\*(.*?)\*/")


def template_for(enc, case, valid):
    words, _length, text = case
    mnem, ops, _mods = split_operands(text)
    ops = [o for o in ops if not re.match(r"^(offset[01]?:|gds$)", o)]
    flds = fields(enc, words)
    tmpl = []
    if enc in ("SOPP", "SOPK") and "hwreg(" in text:
        ops = [o for o in re.split(r", (?![^(]*\))", text.split(None, 1)[1])]
    for pos, tok in enumerate(ops):
        clean = re.sub(r"^[-|]+|\|$", "", tok)
        el = learn_operand(clean, flds, enc)
        if el is None and enc == "SOPC" and pos == 1:
            el = f"ssrc1:{imm_style(enc, valid, pos)}:0"
        elif el is None and enc in ("SOPP", "SOPK"):
            el = f"simm16:{imm_style(enc, valid, pos)}:0"
        elif el is None and enc == "SMEM" and pos == 0 and tok == str(flds["sdata"][1]):
            el = "sdata:i:0"
        elif el is None and enc == "SMEM":
            el = "offset:o:0"
        elif el is None and len(words) > 1 and tok == f"0x{words[1]:x}":
            el = "K:k:32"
        elif el is None and len(words) > 1 and tok == f"0x{words[1] & 0xFFFF:x}":
            el = "K:k:16"
        if el is None:
            el = "?"
        tmpl.append(el)
    return mnem, tmpl


def operand_category(tok):
    tok = re.sub(r"^(neg\(|sext\()|[-|]", "", tok)
    m = re.match(r"^([va])\[(\d+):\d+\]", tok)
    if m and int(m.group(2)) % 2 == 1:
        return "w" if m.group(1) == "v" else "b"
    if re.match(r"^v(\d|\[)", tok):
        return "v"
    if re.match(r"^a(\d|\[)", tok):
        return "a"
    if re.match(r"^(s(\d|\[)|ttmp)", tok):
        return "s"
    if re.match(r"^(vcc|exec|m0|flat_scratch|xnack|src_|null)", tok):
        return "k"
    return "c"


def learn_invalid_notes(enc, decodable, tmpl):
    """Per operand position: category -> note the oracle prints after such an operand.
    For matrix instructions the accumulator (last) operand's category is upper
    case when acc_cd (dword 0 bit 15) selects AGPRs."""
    ntemplate = len(tmpl)
    notes = [dict() for _ in range(ntemplate)]
    for _w, _l, text in decodable:
        acc_cd = enc == "VOP3P" and re.match(r"v_(s)?mfma", text) and _w[0] & 0x8000
        if "/*" not in text or text.split()[0].endswith(("_dpp", "_sdwa")):
            continue
        marked = COMMENT_RE.sub(lambda m: "\x01" + m.group(1).replace(" ", "\x02").replace(",", "\x03") + "\x01", text)
        _m, ops, _ = split_operands(marked)
        # FLAT atomics without return print no destination; the template has one.
        shift = 1 if enc in ("FLAT", "GLOBAL", "SCRATCH") and tmpl and tmpl[0].startswith("vdst:") \
            and len([o for o in ops if not re.match(r"^(offset[01]?:|gds$)", o)]) == ntemplate - 1 else 0
        for pos, tok in enumerate(ops[:ntemplate - shift]):
            pos += shift
            if "\x01" not in tok:
                continue
            operand, note = tok.split("\x01")[0], tok.split("\x01")[1]
            note = note.replace("\x02", " ").replace("\x03", ",")
            if note == "Invalid immediate":
                notes[pos]["C" if acc_cd and pos == 3 else "c"] = "imm"
            else:
                m = re.match(r"Invalid register, operand has '([A-Za-z0-9_]+)' register class$", note)
                if m:
                    cat = operand_category(operand)
                    if acc_cd and pos == 3:
                        cat = cat.upper()
                    notes[pos][cat] = m.group(1)
    return notes


# Fields an opcode may not use: the oracle (LLVM 19 at least) rejects nonzero
# values there unless some accepted word shows otherwise. Mirrored by
# UNUSED_FIELDS in src/table.rs.
UNUSED_FIELDS = [
    (("VOP3", "VOP3P"), "src1", 1, 9, 9, "xsrc1"),
    (("VOP3", "VOP3P"), "src2", 1, 18, 9, "xsrc2"),
    (("VOP3P",), "vdst", 0, 0, 8, "xvdst"),
    (("DS",), "addr", 1, 0, 8, "xaddr"),
    (("DS",), "data0", 1, 8, 8, "xdata0"),
    (("DS",), "data1", 1, 16, 8, "xdata1"),
    (("DS",), "vdst", 1, 24, 8, "xvdst"),
    (("SOPP",), "simm16", 0, 0, 16, "ximm"),
    (("MUBUF",), "vaddr", 0, 12, 2, "xidxoff"),
    (("MUBUF",), "vaddr", 1, 0, 8, "xvaddr"),
    (("MUBUF",), "vdata", 1, 8, 8, "xvdata"),
]


def learn(enc, cases):
    """cases: list of (words, length, text) for one (enc, op) on one target."""
    valid = [c for c in cases if c[1] > 0 and "/*" not in c[2]]
    if not valid:
        # Decoded only with operands the oracle marks invalid (gfx908
        # v_interp_p1/p2_f32_e64 with an SGPR source): the row keeps the
        # opcode known, and its unmodelled operands make it unsupported.
        valid = [(w, n, COMMENT_RE.sub("", t)) for w, n, t in cases if n > 0]
    if not valid:
        return None
    # representative: the plain (not DPP/SDWA) case whose operands map best onto fields
    plain = [c for c in valid if not re.search(r"_(dpp|sdwa)\b", c[2].split()[0])] or valid
    best = None
    for c in plain:
        _m, els = template_for(enc, c, valid)
        named = [e.split(":")[0] for e in els if ":k:" not in e and e != "?"]
        dups = len(named) - len(set(named))
        score = (dups, els.count("?"), sum(":k:" in e for e in els), -len(els))
        if best is None or score < best[0]:
            best = (score, c)
    words, length, text = best[1]
    mnem, tmpl = template_for(enc, best[1], valid)
    mnem = re.sub(r"_(dpp|sdwa)$", "_e32", mnem)
    flds = fields(enc, words)
    if mnem == "s_setreg_imm32_b32":
        tmpl = ["simm16:hwreg:0", "K:k:32"]
    # constant type of each operand-code element
    typed = []
    for pos, el in enumerate(tmpl):
        parts = el.split(":")
        if len(parts) == 3 and parts[1] == "x" and flds.get(parts[0], ("", 0))[0] == "c":
            parts.append(operand_type(enc, cases, pos, parts[0], int(parts[2])))
        typed.append(":".join(parts))
    decodable = [c for c in cases if c[1] > 0]
    notes = learn_invalid_notes(enc, decodable, typed)
    typed = [el + "".join(f":!{cat}={cls}" for cat, cls in sorted(notes[i].items())) for i, el in enumerate(typed)]
    if enc in ("VOP1", "VOP2", "VOPC", "VOP3", "VOP3P"):
        typed = [el + (f":~{st}" if (st := slot_mod_styles(enc, decodable, i)) else "") for i, el in enumerate(typed)]
    vop3b = enc == "VOP3" and any(t.startswith("sdst:") for t in tmpl)
    fl = learn_flags(enc, decodable, vop3b)
    for variant, flag in (("_dpp", "p_dppmods"), ("_sdwa", "p_sdwamods")):
        texts = [t for _w, _l, t in decodable if t.split()[0].endswith(variant)]
        if any(re.search(r"[ ,](-|\||sext\()", t) for t in texts):
            fl.append(flag)
    # LLVM 19 prints the DPP neg bit of an integer source as sext(x); LLVM 22
    # accepts the bit and prints nothing.
    if any("sext(" in t for _w, _l, t in decodable if t.split()[0].endswith("_dpp")):
        fl.append("p_dppsext")
    if enc == "MUBUF" and decodable and all(w[0] & 0x10000 for w, _l, _t in decodable):
        fl.append("rlds")  # only ever decoded with the LDS bit set
    if enc == "DS" and decodable and all(w[0] & 0x10000 for w, _l, _t in decodable):
        fl.append("rgds")  # only ever decoded with the GDS bit set
    used = {t.split(":")[0] for t in tmpl}
    for encs, name, dw, lo, width, flag in UNUSED_FIELDS:
        if enc in encs and name not in used and any(len(w) > dw and bits(w[dw], lo, width) for w, _l, _t in decodable):
            fl.append(flag)
    return mnem, typed, fl


def operand_type(enc, cases, pos, name, width):
    """How constants in this operand print, from the cases that put one there."""
    evidence = set()
    for words, length, text in cases:
        if length <= 0 or text.split()[0].endswith(("_dpp", "_sdwa")):
            continue
        _m, ops, _ = split_operands(COMMENT_RE.sub("", text))
        if pos >= len(ops):
            continue
        val = fields(enc, words)[name][1]
        tok = re.sub(r"^neg\(|\)$", "", ops[pos].strip("|-"))
        if val == 0xF8:
            evidence.add({"0.15915494309189532": "b64", "0x3118": "i16", "0.15915494": "f32"}.get(tok, "?"))
        if val == 0xF2 and tok == "0x3c00":
            evidence.add("i16")
        if val == 0xFF and len(words) > 1 and words[1] > 0xFFFF and tok == f"0x{words[1] & 0xFFFF:x}":
            evidence.add("lit16")
    for ty in ("i16", "b64"):
        if ty in evidence:
            return ty
    if "lit16" in evidence:
        return "f16"
    if "f32" in evidence:
        return "b32"
    return "b64" if width == 2 else "b32"


def slot_mod_styles(enc, cases, pos):
    """Per operand position: how abs and neg print ('a' abs as |x|, 'n' neg as
    -x / neg(x), 's' neg as sext(x)), from every decodable case."""
    styles = set()
    for _w, length, text in cases:
        if length <= 0:
            continue
        _m, ops, _ = split_operands(COMMENT_RE.sub("", text))
        if pos >= len(ops):
            continue
        tok = ops[pos]
        if "|" in tok:
            styles.add("a")
        if tok.startswith("-") and not re.match(r"^-\d", tok) or tok.startswith("neg("):
            styles.add("n")
        if tok.startswith("sext("):
            styles.add("s")
    return "".join(sorted(styles))


def _vop3b(words):
    return False


# Modifier groups: (flag, encodings, predicate on the words, dword, mask). A
# flag is set for an opcode when some word the oracle accepts has bits of the
# group set; the decoder rejects words using a group the opcode lacks.
# Mirrored by MODIFIER_GROUPS in src/table.rs.
def _plain(w):
    return (w[0] & 0x1FF) not in (0xF9, 0xFA)


def _dpp(w):
    return (w[0] & 0x1FF) == 0xFA


def _sdwa(w):
    return (w[0] & 0x1FF) == 0xF9


MODIFIER_GROUPS = [
    ("abs0", ("VOP3",), None, 0, 0x100),
    ("abs1", ("VOP3",), None, 0, 0x200),
    ("abs2", ("VOP3",), None, 0, 0x400),
    ("opsel0", ("VOP3",), None, 0, 0x800),
    ("opsel1", ("VOP3",), None, 0, 0x1000),
    ("opsel2", ("VOP3",), None, 0, 0x2000),
    ("opsel3", ("VOP3",), None, 0, 0x4000),
    ("clamp", ("VOP3", "VOP3P"), None, 0, 0x8000),
    ("omod", ("VOP3",), None, 1, 0x18000000),
    ("neg0", ("VOP3", "VOP3P"), None, 1, 0x20000000),
    ("neg1", ("VOP3", "VOP3P"), None, 1, 0x40000000),
    ("neg2", ("VOP3", "VOP3P"), None, 1, 0x80000000),
    ("neghi", ("VOP3P",), None, 0, 0x700),
    ("opsel", ("VOP3P",), None, 0, 0x3800),
    ("dppmods0", ("VOP1", "VOP2", "VOPC"), _dpp, 1, 0x00300000),
    ("dppmods1", ("VOP1", "VOP2", "VOPC"), _dpp, 1, 0x00C00000),
    ("sdwaneg0", ("VOP1", "VOP2", "VOPC"), _sdwa, 1, 0x00300000),
    ("sdwaneg1", ("VOP1", "VOP2", "VOPC"), _sdwa, 1, 0x30000000),
    ("sdwasext0", ("VOP1", "VOP2", "VOPC"), _sdwa, 1, 0x00080000),
    ("sdwasext1", ("VOP1", "VOP2", "VOPC"), _sdwa, 1, 0x08000000),
    ("sdwasgpr", ("VOP1", "VOP2", "VOPC"), _sdwa, 1, 0x80800000),
    ("sdwaclamp", ("VOP1", "VOP2", "VOPC"), _sdwa, 1, 0x00002000),
    ("sdwaomod", ("VOP1", "VOP2"), _sdwa, 1, 0x0000C000),
    ("sdwasdst", ("VOPC",), _sdwa, 1, 0x00008000),
    ("sdwaunused", ("VOP1", "VOP2"), _sdwa, 1, 0x00001800),
    ("saddr", ("FLAT",), None, 1, 0x007F0000),
    ("acc", ("FLAT", "GLOBAL", "SCRATCH", "MUBUF", "MTBUF"), None, 1, 0x00800000),
    ("lds", ("FLAT", "GLOBAL", "SCRATCH"), None, 0, 0x2000),
    ("sc1", ("FLAT", "GLOBAL", "SCRATCH"), None, 0, 0x02000000),
    ("lds", ("MUBUF",), None, 0, 0x10000),
    ("sc1", ("MUBUF",), None, 0, 0x8000),
    ("gds", ("DS",), None, 0, 0x10000),
    ("opselhi2", ("VOP3P",), None, 0, 0x4000),
    ("cglc", ("FLAT", "GLOBAL", "SCRATCH"), None, 0, 0x10000),
    ("cglc", ("MUBUF",), None, 0, 0x4000),
    ("acc", ("DS",), None, 0, 0x02000000),
    ("imm", ("SMEM",), None, 0, 0x20000),
    ("glc", ("SMEM",), None, 0, 0x10000),
    ("soe", ("SMEM",), None, 0, 0x4000),
    ("d16", ("MIMG",), None, 1, 0x80000000),
]


# Printed-modifier flags: whether the oracle ever prints the modifier for the
# opcode (it accepts some bits without printing them). Mirrored in src/table.rs.
PRINTED = [
    ("p_opsel", r" op_sel:"),
    ("p_opselhi", r" op_sel_hi:"),
    ("p_neglo", r" neg_lo:"),
    ("p_neghi", r" neg_hi:"),
    ("p_clamp", r" clamp\b"),
    ("p_omod", r" (mul|div):"),
    ("p_gds", r" gds\b"),
    ("p_glc", r" (glc|sc0)\b"),
    ("p_offset", r" offset:"),
    ("p_offset01", r" offset[01]:"),
    ("p_scc", r" (scc|sc1)\b"),
    ("p_mfmaneg", r" neg:\["),
    ("p_opsel2", r" op_sel:\[\d,\d\]"),
    ("p_opsel3", r" op_sel:\[\d,\d,\d\]"),
    ("p_opsel4", r" op_sel:\[\d,\d,\d,\d\]"),
    ("p_dstsel", r" dst_sel:"),
    ("p_abs", r"\|"),
    ("p_neg", r"(^|[ ,])-[vsa|(]|neg\("),
]


def learn_flags(enc, decodable, vop3b):
    flags = []
    for flag, rx in PRINTED:
        if any(re.search(rx, " " + t.split(None, 1)[1] if " " in t else "") for _w, _l, t in decodable):
            flags.append(flag)
    for words, _l, text in decodable:
        m = text.split()[0]
        if m.endswith("_dpp") and "dpp" not in flags:
            flags.append("dpp")
        if m.endswith("_sdwa") and "sdwa" not in flags:
            flags.append("sdwa")
    for flag, encs, pred, dw, mask in MODIFIER_GROUPS:
        if enc not in encs or flag in flags:
            continue
        if vop3b and dw == 0 and mask & 0x7F00:
            continue
        if any(len(w) > dw and w[dw] & mask and (pred is None or pred(w)) for w, _l, _t in decodable):
            flags.append(flag)
    return flags


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--golden", default=os.path.join(HERE, "..", "tests", "golden"))
    ap.add_argument("--out", default=os.path.join(HERE, "..", "tables", "gfx9.tsv"))
    args = ap.parse_args()
    golden_dir = args.golden
    per = OrderedDict()  # (enc, op) -> {target: result}
    for t in TARGETS:
        groups = OrderedDict()
        for words, length, text in load_golden(os.path.join(golden_dir, f"{t}.txt")):
            enc, op = ident(words[0])
            if length == 16:
                continue  # fused scaled MFMA: decoded from the MFMA's row
            if enc is None:
                continue
            groups.setdefault((enc, op), []).append((words, length, text))
        for key, cases in groups.items():
            res = learn(key[0], cases)
            per.setdefault(key, {})[t] = res
    out = ["enc\top\ttargets\tmnemonic\toperands\tflags\tclass\n"]
    for (enc, op), bytgt in per.items():
        rows = OrderedDict()
        for t in TARGETS:
            r = bytgt.get(t)
            if r is None:
                continue
            k = (r[0], " ".join(r[1]), ",".join(r[2]))
            rows.setdefault(k, []).append(t)
        for (mnem, tmpl, flags), tg in rows.items():
            out.append(f"{enc}\t{op}\t{','.join(tg)}\t{mnem}\t{tmpl or '-'}\t{flags or '-'}\t{classify(mnem)}\n")
    with open(args.out, "w") as f:
        f.writelines(out)


if __name__ == "__main__":
    main()
