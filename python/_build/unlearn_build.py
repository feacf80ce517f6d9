"""The build backend of the `unlearn` client (PEP 517, PEP 660).

Standard library only, so that ``pip install ./python`` works without network
access: pip builds a package in an isolated environment into which it
installs the backend's requirements from an index, and this backend has none
(``requires = []`` in pyproject.toml). A pure-Python package needs only a zip
file in the wheel format (PEP 427: the modules, and a ``.dist-info`` folder
with METADATA, WHEEL and a RECORD of hashes), which is what this writes.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")
PACKAGE = "unlearn"
# Zip entries get this time (the zip format's earliest), so that a build is
# reproducible.
EPOCH = (1980, 1, 1, 0, 0, 0)


def _project():
    """Name, version, summary and Python requirement from pyproject.toml."""
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    project = text.split("[project]", 1)[1].split("\n[", 1)[0]

    def field(name):
        m = re.search(r'^%s\s*=\s*"([^"]*)"' % name, project, re.M)
        if not m:
            raise ValueError("pyproject.toml: [project] has no %s" % name)
        return m.group(1)

    return field("name"), field("version"), field("description"), field("requires-python")


def _metadata():
    name, version, summary, python = _project()
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return (
        "Metadata-Version: 2.1\n"
        "Name: %s\nVersion: %s\nSummary: %s\nRequires-Python: %s\n"
        "Provides-Extra: numpy\nRequires-Dist: numpy; extra == \"numpy\"\n"
        "Description-Content-Type: text/markdown\n\n%s" % (name, version, summary, python, readme)
    )


def _dist_info():
    name, version, _, _ = _project()
    return "%s-%s.dist-info" % (name, version)


def _wheel_name():
    name, version, _, _ = _project()
    return "%s-%s-py3-none-any.whl" % (name, version)


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d\n" % (path, digest, len(data))


def _write_wheel(directory, files):
    """Writes files (archive path → bytes) and the dist-info into a wheel."""
    info = _dist_info()
    files = dict(files)
    files[info + "/METADATA"] = _metadata().encode()
    files[info + "/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: unlearn_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[info + "/top_level.txt"] = (PACKAGE + "\n").encode()
    record = "".join(_record_line(p, d) for p, d in sorted(files.items())) + info + "/RECORD,,\n"
    files[info + "/RECORD"] = record.encode()
    path = os.path.join(directory, _wheel_name())
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name in sorted(files):
            zi = zipfile.ZipInfo(name, EPOCH)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = 0o644 << 16
            z.writestr(zi, files[name])
    return os.path.basename(path)


def _package_files():
    out = {}
    pkg = os.path.join(SRC, PACKAGE)
    for dirpath, _, names in os.walk(pkg):
        for n in sorted(names):
            if n.endswith(".py") or n == "py.typed":
                full = os.path.join(dirpath, n)
                rel = os.path.relpath(full, SRC).replace(os.sep, "/")
                with open(full, "rb") as f:
                    out[rel] = f.read()
    return out


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    info = os.path.join(metadata_directory, _dist_info())
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    return _dist_info()


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _package_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 660: a wheel whose .pth file puts src/ on sys.path."""
    return _write_wheel(wheel_directory, {"_unlearn_editable.pth": (SRC + "\n").encode()})


def build_sdist(sdist_directory, config_settings=None):
    name, version, _, _ = _project()
    base = "%s-%s" % (name, version)
    path = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as tar:

        def add(rel, data):
            ti = tarfile.TarInfo(base + "/" + rel)
            ti.size, ti.mode, ti.mtime = len(data), 0o644, 315532800
            tar.addfile(ti, io.BytesIO(data))

        add("PKG-INFO", _metadata().encode())
        for rel in ("pyproject.toml", "README.md", "_build/unlearn_build.py"):
            with open(os.path.join(ROOT, rel), "rb") as f:
                add(rel, f.read())
        for rel, data in sorted(_package_files().items()):
            add("src/" + rel, data)
    return os.path.basename(path)
