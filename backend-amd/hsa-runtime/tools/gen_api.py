#!/usr/bin/env python3
"""Generates src/ffi/generated.rs from the installed HSA headers (ROCm 5.2's
hsa.h family, Debian's libhsa-runtime-dev): the C typedefs the API uses
(enums as integers of the C type's size and sign, handle structs, opaque
structs of the C size), the enumerators of the hsa_* enums, and the four
API tables of hsa_api_trace.h (Core, AmdExt, Finalizer, Image) in header
order, as one `hsa_api_tables!` invocation.

Reads the headers through clang's JSON AST (declarations, parameter types)
and a small C++ program compiled by g++ (sizes, signedness and enumerator
values, so nothing is guessed). Usage:

    backend-amd/hsa-runtime/tools/gen_api.py > backend-amd/hsa-runtime/src/ffi/generated.rs
    cargo fmt -p xfpx-hsa-runtime
"""
import json
import os
import re
import subprocess
import sys
import tempfile

CLANG = os.environ.get("CLANGXX", "clang++-19")
INCLUDES = ["hsa.h", "hsa_ext_amd.h", "hsa_ext_image.h", "hsa_ext_finalize.h", "hsa_ven_amd_loader.h", "hsa_api_trace.h"]
TABLES = [("CoreApiTable", "core"), ("AmdExtTable", "amd_ext"), ("FinalizerExtTable", "finalizer_ext"),
          ("ImageExtTable", "image_ext")]
# Structs the runtime lays out by hand in src/ffi/types.rs (their sizes and
# offsets are checked against the headers by tests/layout.rs).
HANDWRITTEN = {"hsa_queue_t", "hsa_dim3_t", "hsa_amd_pointer_info_t", "hsa_kernel_dispatch_packet_t",
               "hsa_barrier_and_packet_t", "hsa_barrier_or_packet_t", "hsa_agent_dispatch_packet_t",
               "hsa_amd_profiling_dispatch_time_t", "hsa_amd_profiling_async_copy_time_t",
               "hsa_ven_amd_loader_segment_descriptor_t"}
BUILTIN = {"void": "c_void", "bool": "bool", "int": "c_int", "char": "c_char", "size_t": "usize",
           "uint8_t": "u8", "uint16_t": "u16", "uint32_t": "u32", "uint64_t": "u64", "int8_t": "i8",
           "int16_t": "i16", "int32_t": "i32", "int64_t": "i64", "unsigned int": "u32", "long": "i64",
           "unsigned long": "u64"}
EXTENDS = [("HSA_STATUS_", "hsa_status_t"), ("HSA_EXT_STATUS_", "hsa_status_t"),
           ("HSA_EXT_AGENT_INFO_", "hsa_agent_info_t")]
KEYWORDS = {"type", "ref", "mod", "fn", "in", "match", "self", "use", "loop", "move", "impl", "where"}


def header_source():
    return "#define AMD_INTERNAL_BUILD\n#include <stddef.h>\n" + "".join(
        f"#include <hsa/{h}>\n" for h in INCLUDES)


def read_ast():
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "all.cpp")
        with open(src, "w") as f:
            f.write(header_source())
        out = subprocess.run([CLANG, "-I/usr/include/hsa", "-fsyntax-only", "-Xclang", "-ast-dump=json", src],
                             check=True, capture_output=True).stdout
    return json.loads(out)


def collect(ast):
    funcs, records, typedefs, enums = {}, {}, {}, []

    def walk(n):
        for d in n.get("inner", []):
            k = d.get("kind")
            if k == "FunctionDecl":
                funcs.setdefault(d["name"], d)
            elif k in ("LinkageSpecDecl", "NamespaceDecl"):
                walk(d)
            elif k in ("CXXRecordDecl", "RecordDecl") and "inner" in d and d.get("name"):
                records[d["name"]] = d
            elif k == "TypedefDecl":
                typedefs[d["name"]] = d
            elif k == "EnumDecl":
                consts = [c["name"] for c in d.get("inner", []) if c.get("kind") == "EnumConstantDecl"]
                if consts and (consts[0].startswith("HSA_") or d.get("name", "").startswith("hsa_")):
                    enums.append((d.get("name"), d.get("id"), consts))
    walk(ast)
    return funcs, records, typedefs, enums


def split_args(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


class Types:
    """C type strings to Rust types; remembers the typedef names used."""

    def __init__(self):
        self.used = set()

    def rust(self, c):
        c = c.replace("volatile ", "").strip()
        m = re.match(r"^(.*?)\s*\(\*\)\((.*)\)$", c)
        if m:
            ret, args = m.group(1), split_args(m.group(2))
            args = [] if args == ["void"] else args
            r = self.rust(ret)
            tail = "" if r == "()" else f" -> {r}"
            return f"Option<unsafe extern \"C\" fn({', '.join(self.rust(a) for a in args)}){tail}>"
        stars = len(c) - len(c.rstrip("* "))
        base = c.rstrip("* ").strip()
        depth = c.count("*")
        const = base.startswith("const ")
        base = base.removeprefix("const ").strip()
        if base.startswith("struct ") and depth > 0:
            base = "void"  # a pointer to a struct with no typedef: opaque
        if depth == 0:
            if base == "void":
                return "()"
            return self.name(base)
        inner = "c_void" if base == "void" else self.name(base)
        ty = inner
        for i in range(depth):
            ty = ("*const " if (i == 0 and const) else "*mut ") + ty
        del stars
        return ty

    def name(self, base):
        if base in BUILTIN:
            return BUILTIN[base]
        self.used.add(base)
        return base


def probe(typedef_names, enums):
    """Sizes, alignments and signedness of typedefs; enumerator values."""
    lines = [header_source(), "#include <stdio.h>\n#include <type_traits>\n",
             "template <class T> constexpr int is_signed_type() {\n",
             "  if constexpr (std::is_enum_v<T>) return std::is_signed_v<std::underlying_type_t<T>>;\n",
             "  else return std::is_signed_v<T>;\n}\n",
             "int main() {\n"]
    for t in sorted(typedef_names):
        lines.append(f'  printf("T {t} %zu %zu %d\\n", sizeof({t}), alignof({t}), '
                     f'is_signed_type<{t}>());\n')
    for _, _, consts in enums:
        for c in consts:
            lines.append(f'  printf("C {c} %lld\\n", (long long){c});\n')
    lines.append("}\n")
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "probe.cpp"), os.path.join(d, "probe")
        with open(src, "w") as f:
            f.write("".join(lines))
        subprocess.run(["g++", "-std=c++17", "-I/usr/include/hsa", src, "-o", exe], check=True)
        out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    sizes, values = {}, {}
    for line in out.splitlines():
        p = line.split()
        if p[0] == "T":
            sizes[p[1]] = (int(p[2]), int(p[3]), p[4] == "1")
        else:
            values[p[1]] = int(p[2])
    return sizes, values


def int_type(size, signed):
    return ("i" if signed else "u") + str(8 * size)


def main():
    ast = read_ast()
    funcs, records, typedefs, enums = collect(ast)
    types = Types()
    tables = []
    for table, field in TABLES:
        entries = []
        for f in records[table]["inner"]:
            if f.get("kind") != "FieldDecl" or f["name"] == "version":
                continue
            name = f["name"].removesuffix("_fn")
            fd = funcs[name]
            ret = types.rust(fd["type"]["qualType"].split("(")[0].strip())
            params = []
            for i, p in enumerate(x for x in fd.get("inner", []) if x["kind"] == "ParmVarDecl"):
                pname = p.get("name") or f"arg{i}"
                pname = pname + "_" if pname in KEYWORDS else pname
                params.append(f"{pname}: {types.rust(p['type']['qualType'])}")
            entries.append((f["name"], name, params, ret))
        tables.append((table, field, entries))

    # Typedefs reached from the signatures, resolved one level at a time.
    # EnumDecl id -> the typedef that names it (`typedef enum {...} hsa_x_t;`).
    enum_typedefs = {}
    for name, td in typedefs.items():
        for e in td.get("inner", []):
            owned = e.get("ownedTagDecl") or {}
            if owned.get("kind") == "EnumDecl":
                enum_typedefs[owned["id"]] = name
        q = td["type"]["qualType"]
        if q.startswith("enum ") and q.removeprefix("enum ") == name:
            enum_typedefs.setdefault(name, name)
    pending, aliases, handles, opaque = sorted(types.used), {}, [], []
    seen = set()
    while pending:
        t = pending.pop()
        if t in seen:
            continue
        seen.add(t)
        td = typedefs.get(t)
        if td is None:
            sys.exit(f"gen_api: no typedef for {t}")
        q = td["type"]["qualType"]
        if q.startswith("enum ") or t in enum_typedefs.values():
            aliases[t] = "enum"
        elif q.startswith("struct ") and not q.endswith("*"):
            rec = records.get(q.removeprefix("struct "))
            fields = [x for x in (rec or {}).get("inner", []) if x.get("kind") == "FieldDecl"]
            if len(fields) == 1 and fields[0]["name"] == "handle" and fields[0]["type"]["qualType"] == "uint64_t":
                handles.append(t)
            elif t not in HANDWRITTEN:
                opaque.append(t)
        else:
            before = set(types.used)
            aliases[t] = types.rust(q)
            pending.extend(sorted(types.used - before))
    enum_names = {enum_typedefs.get(i) or enum_typedefs.get(n) for n, i, _ in enums} - {None}
    for n in enum_names:
        if n in typedefs and n not in aliases:
            aliases[n] = "enum"
    sizes, values = probe(list(aliases) + opaque, enums)

    out = ["// @generated by backend-amd/hsa-runtime/tools/gen_api.py from the HSA headers",
           "// (ROCm 5.2, libhsa-runtime-dev). Do not edit: regenerate.",
           "",
           "#![allow(non_camel_case_types, clippy::all)]",
           "",
           "use super::types::*;",
           "use std::ffi::{c_char, c_int, c_void};",
           "",
           "// Typedefs: enums as integers of their C size and sign; other aliases as C declares them."]
    for t in sorted(aliases):
        if aliases[t] == "enum":
            size, _, signed = sizes[t]
            out.append(f"pub type {t} = {int_type(size, signed)};")
        else:
            out.append(f"pub type {t} = {aliases[t]};")
    out += ["", "// Handle structs ({ uint64_t handle; })."]
    for t in sorted(handles):
        out += ["#[repr(C)]", "#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]",
                f"pub struct {t} {{", "    pub handle: u64,", "}"]
    out += ["", "// Structs the runtime only passes along: the C size and alignment, no fields."]
    for t in sorted(opaque):
        size, align, _ = sizes[t]
        out += [f"#[repr(C, align({align}))]", "#[derive(Debug, Clone, Copy)]",
                f"pub struct {t} {{", f"    _bytes: [u8; {size}],", "}"]
    out += ["", "// Enumerators of the hsa_* enums."]
    for name, eid, consts in enums:
        tname = enum_typedefs.get(eid) or enum_typedefs.get(name)
        for c in consts:
            v = values[c]
            # Unnamed enums that extend a named one (AMD's extra status codes).
            tname = tname or next((t for pre, t in EXTENDS if c.startswith(pre)), None)
            if tname in aliases and aliases[tname] == "enum":
                out.append(f"pub const {c}: {tname} = {v};")
            else:
                out.append(f"pub const {c}: i64 = {v};")
    out += ["", "crate::hsa_api_tables! {"]
    for table, field, entries in tables:
        out.append(f"    {table} {field} {{")
        for fname, name, params, ret in entries:
            out.append(f"        {fname} = {name}({', '.join(params)}) -> {ret};")
        out.append("    }")
    out.append("}")
    print("\n".join(out))


if __name__ == "__main__":
    main()
