"""scripts/htcondor-testpool builds its tree from the Debian mirror of the host's own apt sources
(``mirror [DIR]``): sample sources in both of apt's formats, with the entries apt skips."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "htcondor-testpool"

DEB822 = """\
Types: deb
# a comment line inside the stanza
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main
"""


def mirror(apt: Path, override: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CRABTUI_TESTPOOL_MIRROR"}
    if override is not None:
        env["CRABTUI_TESTPOOL_MIRROR"] = override
    return subprocess.run([str(SCRIPT), "mirror", str(apt)], capture_output=True, text=True, timeout=30, env=env)


def sources(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / "sources.list.d").mkdir()
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize("files, expected", [
    ({"sources.list.d/debian.sources": DEB822}, "http://mirror.example/debian"),
    # deb822: a disabled stanza, a source-only one, several URIs of which the first is the archive.
    ({"sources.list.d/debian.sources": "Types: deb\nURIs: http://off.example/debian\nSuites: trixie\n"
                                       "Components: main\nEnabled: no\n\n"
                                       "Types: deb-src\nURIs: http://src.example/debian\nSuites: trixie\n"
                                       "Components: main\n\n"
                                       "Types: deb\nURIs: http://a.example/debian/ http://b.example/debian\n"
                                       "Suites: trixie\nComponents: main contrib\n"}, "http://a.example/debian"),
    # One-line format: comments, deb-src, options in brackets, the security and updates suites first.
    ({"sources.list": "# deb http://old.example/debian buster main\n"
                      "deb-src http://src.example/debian bookworm main\n"
                      "deb http://mirror.example/debian-security bookworm-security main\n"
                      "deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
                      "http://mirror.example/debian bookworm-updates main\n"
                      "deb [ arch=amd64 ] http://proxy.example:3142/debian bookworm main contrib  # the archive\n"},
     "http://proxy.example:3142/debian"),
    # sources.list comes first; then sources.list.d by name, .list and .sources alike; a third
    # party's repository (no debian path, or no main component) and files apt ignores are skipped.
    ({"sources.list": "# moved to sources.list.d\n",
      "sources.list.d/a-docker.list": "deb https://tools.example/linux/debian bookworm stable\n",
      "sources.list.d/b-node.sources": "Types: deb\nURIs: https://node.example/node_20.x\nSuites: nodistro\n"
                                       "Components: main\n",
      "sources.list.d/c-debian.list.disabled": "deb http://disabled.example/debian bookworm main\n",
      "sources.list.d/d-debian.sources": DEB822}, "http://mirror.example/debian"),
])
def test_the_mirror_is_the_host_apt_sources_debian_archive(tmp_path, files, expected):
    result = mirror(sources(tmp_path, files))
    assert (result.returncode, result.stdout, result.stderr) == (0, expected + "\n", "")


def test_without_a_debian_archive_it_says_to_set_the_variable(tmp_path):
    apt = sources(tmp_path, {"sources.list.d/security.sources": DEB822.split("\n\n")[1]})
    result = mirror(apt)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (f"htcondor-testpool: error: no Debian mirror in the apt sources of {apt} "
                             "(sources.list, sources.list.d); set CRABTUI_TESTPOOL_MIRROR to one\n")


def test_the_environment_variable_overrides_the_apt_sources(tmp_path):
    result = mirror(sources(tmp_path, {"sources.list.d/debian.sources": DEB822}), "http://chosen.example/debian/")
    assert (result.returncode, result.stdout) == (0, "http://chosen.example/debian\n")
