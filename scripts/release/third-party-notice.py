#!/usr/bin/env python3
"""Usage: third-party-notice.py BUILD_DIR PRODUCT… > THIRD_PARTY.md

Writes the notice for what the release binaries carry inside: the Swift packages whose modules the linker
was given (BUILD_DIR/PRODUCT.product/Objects.LinkFileList), with the versions Package.resolved pins and
their licences read from their LICENSE files; their NOTICE files verbatim (Apache-2.0 section 4(d)); then
the Swift runtime and Foundation (--static-swift-stdlib), libstdc++ and libgcc_eh (the GCC runtime, whose
exception allows this) and libyaml (libyaml-dev's static archive). A module it cannot place in a package,
or a licence it does not recognise, fails the run: the notice must not go stale quietly when a dependency
is added."""
import glob
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECKOUTS = os.path.join(ROOT, ".build", "checkouts")


def linked_modules(build, product):
    with open(os.path.join(build, f"{product}.product", "Objects.LinkFileList")) as handle:
        paths = [line.strip().strip("'\"") for line in handle if line.strip()]
    modules = set()
    for path in paths:
        # BUILD_DIR/MODULE.build/FILE.o (the scratch directory itself is .build: no module name)
        parts = [part for part in path.split(os.sep) if part.endswith(".build") and part != ".build"]
        if parts:
            modules.add(parts[-1][: -len(".build")])
    return modules


def c99name(target):
    """A target's module name, as its object directory is named: fcm-emulator builds in fcm_emulator.build."""
    return target.replace("-", "_")


def module_owners():
    owners = {}
    for package in sorted(os.listdir(CHECKOUTS)):
        for source in glob.glob(os.path.join(CHECKOUTS, package, "Sources", "*")):
            owners.setdefault(c99name(os.path.basename(source)), package)
    return owners


def declared_by(module):
    """The package whose manifest declares a target MODULE at a path of its own (swift-system's SystemPackage)."""
    for package in sorted(os.listdir(CHECKOUTS)):
        manifest = os.path.join(CHECKOUTS, package, "Package.swift")
        if os.path.exists(manifest) and re.search(r'Target\(\s*name:\s*"' + re.escape(module) + '"', open(manifest).read(), re.IGNORECASE):
            return package
    return None


def licence(package):
    text = open(os.path.join(CHECKOUTS, package, "LICENSE.txt")).read()
    if "Apache License" in text and "Version 2.0" in text:
        return "Apache-2.0 with the Swift Runtime Library Exception" if "Runtime Library Exception" in text else "Apache-2.0"
    sys.exit(f"third-party notice: unrecognised licence in .build/checkouts/{package}/LICENSE.txt")


def main():
    build, products = sys.argv[1], sys.argv[2:]
    ours = {c99name(name) for name in os.listdir(os.path.join(ROOT, "Sources"))}
    owners = module_owners()
    pins = {pin["identity"]: pin for pin in json.load(open(os.path.join(ROOT, "Package.resolved")))["pins"]}
    used = {}  # package -> set of products
    for product in products:
        for module in linked_modules(build, product):
            if module in ours:
                continue
            package = declared_by(module) or owners.get(module)
            if package is None:
                sys.exit(f"third-party notice: {product} links module {module}, which no checked-out package provides")
            used.setdefault(package, set()).add(product)

    everywhere = set(products)
    def where(found):
        return "both" if found == everywhere else ", ".join(sorted(found))

    out = []
    out.append("# Third-party software in fcmctl and fcm-emulator\n")
    out.append(
        "The release binaries are linked statically against the components below; at run time they load only "
        "glibc and (fcmctl) the system's libcurl (`libcurl.so.4`, curl licence), which are not part of this "
        "archive. The Apache License 2.0 text is in `LICENSE`; the Swift Runtime Library Exception waives its "
        "attribution requirement for binaries built from the Swift projects that carry it.\n")
    out.append("| Component | Version | Licence | In |")
    out.append("|---|---|---|---|")
    out.append("| Swift standard library and runtime (incl. Concurrency, Synchronization, _StringProcessing) | "
               f"{os.environ.get('SWIFT_VERSION', 'toolchain')} | Apache-2.0 with the Swift Runtime Library Exception | both |")
    out.append("| Foundation (swift-foundation, swift-corelibs-foundation), libdispatch, BlocksRuntime | "
               f"{os.environ.get('SWIFT_VERSION', 'toolchain')} | Apache-2.0 with the Swift Runtime Library Exception | both |")
    out.append("| ICU (swift-foundation-icu, with its data) inside Foundation | toolchain | Unicode License v3 (Unicode-3.0) | both |")
    out.append(f"| libstdc++ and libgcc_eh (the C++ runtime of the toolchain and of BoringSSL) | GCC {os.environ.get('GCC_VERSION', '')} | "
               "GPL-3.0 with the GCC Runtime Library Exception 3.1 | both |")
    out.append(f"| LibYAML | {os.environ.get('LIBYAML_VERSION', 'libyaml-dev')} | MIT (Expat) | fcmctl |")
    for package in sorted(used):
        pin = pins.get(package, {})
        state = pin.get("state", {})
        version = state.get("version") or (state.get("revision", "")[:12] or "?")
        url = pin.get("location", "")
        name = f"[{package}]({url})" if url.startswith("https://") else package
        if package == "swift-crypto":
            name += ", with BoringSSL"
        licences = licence(package)
        if package == "swift-crypto":
            licences += "; BoringSSL: OpenSSL, SSLeay and ISC licences (Apache-2.0 for newer code)"
        out.append(f"| {name} | {version} | {licences} | {where(used[package])} |")
    out.append("")

    out.append("## LibYAML\n")
    out.append("```")
    out.append("Copyright (c) 2017-2020 Ingy döt Net\nCopyright (c) 2006-2016 Kirill Simonov\n")
    out.append(MIT)
    out.append("```\n")
    out.append("## ICU\n")
    out.append("ICU is Copyright © 2016 and later Unicode, Inc. and others, under the Unicode License v3: "
               "https://www.unicode.org/license.txt (the text is also in Debian's libicu package, "
               "/usr/share/doc/libicu72/copyright).\n")
    out.append("## NOTICE files of the Swift packages\n")
    for package in sorted(used):
        notice = os.path.join(CHECKOUTS, package, "NOTICE.txt")
        if os.path.exists(notice):
            out.append(f"### {package}\n")
            out.append("```")
            out.append(open(notice).read().strip())
            out.append("```\n")
    sys.stdout.write("\n".join(out))


MIT = """Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do
so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE."""

if __name__ == "__main__":
    main()
