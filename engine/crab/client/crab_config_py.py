"""Running a ``crabConfig.py`` as ``crab submit`` does, with no CMS software installed.

CRAB imports the file as a module named after it, so ``if __name__ == '__main__'`` blocks (the
loops of multi-crab scripts) do not run; neither do they here, unless the caller runs the file as
a script (``main``: ``python multicrab.py ARGS`` with ``ARGS`` in ``sys.argv``, and
``multiprocessing`` forking, so that a ``Process`` started there inherits the stand-ins).  While
it runs:

* stand-ins of the CRAB modules a configuration imports are in ``sys.modules``:
  ``CRABClient.UserUtilities`` (``config``, ``getUsername``, ``getUsernameFromCRIC``,
  ``getUsernameFromSiteDB``: the local user stands in for the CMS user name;
  ``setConsoleLogLevel``, ``getConsoleLogLevel`` and ``CRABClient.ClientUtilities.LOGLEVEL_MUTE``,
  with which multi-crab scripts quiet CRAB's console log: there is none to quiet here; and
  ``ClientException``, ``LOGLEVEL_MUTE`` and ``Configuration``, which CRAB's module imports and
  scripts import from it),
  ``CRABClient.ClientExceptions`` (CRAB's exception classes), ``CRABAPI.RawCommand``
  (``crabCommand``: ``crabCommand('submit', config=X)`` hands a copy of ``X``'s sections, as
  they are at the call, to the caller's ``submit`` and returns what it returns, CRAB's
  ``{'requestname': ..., 'uniquerequestname': ...}``; a :class:`SubmitFailed` it raises reaches
  the script as CRAB's ``ConfigurationException`` or ``ClientException``; another command the
  caller's ``commands`` has is given the command line the call stands for, as CRAB's
  ``execRaw`` gives it to the command, and returns what it returns, a :class:`CommandFailed` it
  raises reaching the script as the ``ClientException`` subclass crab raises there, or as
  ``CRABAPI.BadArgumentException`` for options crab's parser refuses; a name that is no crab
  command, a short name included, raises ``BadArgumentException`` as ``execRaw`` does; crab's
  other commands raise ``ClientException`` naming the crabtui command line the call stands for) and
  ``WMCore.Configuration`` (``Configuration``, ``ConfigSection``);
* ``httplib``, Python 2's name of ``http.client``, which multi-crab scripts written for Python 2
  import for ``HTTPException`` (the only Python 2 name stood in for: the others' APIs changed);
* ``sys.argv[1:]`` is ``['submit', FILE, Section.parameter=value...]``, as under ``crab submit``
  (``ARGS`` when the file runs as a script, ``python FILE ARGS``; ``sys.argv[0]`` is the file, as
  runpy sets it);
* the file's directory is the working directory and the first entry of ``sys.path``, so helper
  modules and files beside it are found wherever crabtui runs (as when ``crab submit`` runs in
  the configuration's directory); afterwards ``sys.path`` is as it was (with none of the file's
  own additions) and the modules imported from that directory are forgotten.

Everything is put back afterwards, under a lock, since all of it is process-wide.  Executing the
file runs the user's code: load configurations in the user's own process (the CLI), not in a
shared daemon.  Errors raise :class:`LoadError`: one line with the file's line where known, and a
hint only where one is true (a missing CRAB module is one this loader does not stand in for; a
missing CMSSW module is not installed here; Python 2 code is not Python 3).
"""

from __future__ import annotations

import ast
import copy
import getpass
import http.client
import logging
import multiprocessing
import os
import re
import runpy
import shlex
import sys
import threading
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["CommandFailed", "ConfigSection", "Configuration", "LoadError", "Loaded", "SubmitFailed", "run_config"]

SECTIONS = ("General", "JobType", "Data", "Site", "User", "Debug")
"""The sections ``CRABClient.UserUtilities.config()`` creates."""
_CRAB_MODULES = ("CRABClient", "CRABAPI", "WMCore")
_CMSSW_MODULES = ("FWCore", "Configuration", "PhysicsTools", "RecoJets", "HLTrigger", "SimGeneral",
                  "IOMC", "CondCore", "JetMETCorrections", "RecoEgamma", "RecoMuon", "DataFormats")
_CMSENV = ("CMSSW_BASE", "CMSSW_VERSION", "CMSSW_RELEASE_BASE", "SCRAM_ARCH", "LOCALRT")
"""What cmsenv sets in a CMSSW area, and configurations read from os.environ."""
_STAND_INS = ("CRABClient.UserUtilities (config, getUsername, getUsernameFromCRIC, setConsoleLogLevel, "
              "getConsoleLogLevel, ClientException, LOGLEVEL_MUTE), CRABClient.ClientUtilities (LOGLEVEL_MUTE), "
              "CRABClient.ClientExceptions, CRABAPI.RawCommand (crabCommand) and WMCore.Configuration (Configuration)")
LOGLEVEL_MUTE = logging.CRITICAL + 10  # CRABClient.ClientUtilities': above every level, so nothing is logged
_PYTHON3_NAMES = {  # Python 2 names a configuration may still use, and what Python 3 calls them
    "urllib2": "urllib.request", "commands": "subprocess", "ConfigParser": "configparser", "cPickle": "pickle",
    "StringIO": "io", "Queue": "queue", "urlparse": "urllib.parse", "xrange": "range", "raw_input": "input",
    "basestring": "str", "unicode": "str", "iteritems": "items()", "itervalues": "values()", "iterkeys": "keys()",
    "has_key": "the in operator", "execfile": "exec(open(...).read())", "file": "open", "reduce": "functools.reduce",
    "long": "int", "unichr": "chr",
}
_RX_PY2_LIST = re.compile(r"'(?:dict_)?(keys|values|items|map|filter|zip)' object is not subscriptable")
"""Python 3's views and iterators where Python 2 returned lists: samples.keys()[0]."""


class LoadError(Exception):
    """The file could not be run; ``line`` is the line of the file where it failed, if known."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


class SubmitFailed(Exception):
    """Raised by a ``submit`` hook: the configuration was not submitted.  The script sees CRAB's
    ``ConfigurationException`` if ``configuration`` (CRAB would refuse the configuration itself),
    else ``ClientException``, with the same message."""

    def __init__(self, message: str, *, configuration: bool = False):
        super().__init__(message)
        self.configuration = configuration


class CommandFailed(Exception):
    """Raised by one of the ``commands`` hooks (crab status, ...): the script sees the exception
    CRAB raises there, named by ``exception`` (CRABClient's ``ClientException`` or one of its
    subclasses, or CRABAPI's ``BadArgumentException`` for a command line crab's option parser
    refuses), with the same message."""

    def __init__(self, message: str, exception: str = "ClientException"):
        super().__init__(message)
        self.exception = exception


Sections = dict[str, dict[str, Any]]
Submit = Callable[[Sections, bool, bool], dict[str, str]]
"""Submits (or, if the first bool is set, dry-runs) a config passed to crabCommand; the second is
crab submit's --wait: wait until the task worker has processed the task."""
Commands = Mapping[str, Callable[[list[str]], Any]]
"""crab's other commands a multi-crab script may call, by name: each takes the command line
crabCommand makes of the call's arguments (``['--dir', 'crab_projects/crab_x']``)."""


@dataclass(frozen=True)
class Loaded:
    sections: Sections | None
    """The module-level ``config``'s parameters, by section (or, as crab finds it, the first
    Configuration the module holds, whatever its name); None if the file defines none (a script that
    submits through ``crabCommand`` only)."""
    multicrab: bool
    """Whether the file uses ``crabCommand`` (a multi-crab script)."""
    missing: str = ""
    """Without sections: how the file lacks a ``config`` ("defines no 'config'")."""

    def error(self, source: str) -> LoadError:
        """The error for a file without a module-level ``config`` that submits none.  A multi-crab
        script (its configs made and submitted in its ``__main__`` block) is pointed to ``--multicrab``."""
        what = (f"it is a multi-crab script: 'crabtui task submit --multicrab {source}' runs its __main__ "
                f"block as python does and submits each config it passes to crabCommand('submit')."
                if self.multicrab else
                "Start it with 'from CRABClient.UserUtilities import config' and 'config = config()'.")
        return LoadError(f"{source}: Unable to load Configuration object from file {source}: it {self.missing} at "
                         f"module level; {what}")


class ConfigSection:
    """WMCore's ConfigSection, as far as a crabConfig.py uses it: parameters set as attributes."""

    def __init__(self, name: str | None = None):
        object.__setattr__(self, "_internal_name", name)
        object.__setattr__(self, "_internal_parameters", {})

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_internal"):
            object.__setattr__(self, name, value)
            return
        self._internal_parameters[name] = value
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        self._internal_parameters.pop(name, None)
        object.__delattr__(self, name)

    def section_(self, name: str) -> ConfigSection:
        if name not in self._internal_parameters:
            setattr(self, name, ConfigSection(name))
        return getattr(self, name)

    def listSections_(self) -> list[str]:  # noqa: N802 (WMCore's name)
        return list(self._internal_parameters)

    def dictionary_(self) -> dict[str, Any]:
        return dict(self._internal_parameters)

    def pythonise_(self) -> list[str]:
        """The section as Python assignments (``General.requestName = 'x'``), as WMCore writes it."""
        return [f"{self._internal_name}.{name} = {value!r}" for name, value in self._internal_parameters.items()]

    def __str__(self) -> str:
        return "".join(f"{line}\n" for line in self.pythonise_())


class Configuration:
    """WMCore's Configuration: a set of named sections created with ``section_``."""

    def __init__(self) -> None:
        object.__setattr__(self, "_internal_sections", [])

    def __setattr__(self, name: str, value: Any) -> None:
        if not isinstance(value, ConfigSection):
            raise AttributeError(f"Can only add ConfigSection objects to Configuration; use "
                                 f"config.section_({name!r}) and set parameters in it")
        if name not in self._internal_sections:
            self._internal_sections.append(name)
        object.__setattr__(self, name, value)

    def section_(self, name: str) -> ConfigSection:
        if name not in self._internal_sections:
            setattr(self, name, ConfigSection(name))
        return getattr(self, name)

    def listSections_(self) -> list[str]:  # noqa: N802 (WMCore's name)
        return list(self._internal_sections)

    def pythonise_(self) -> str:
        """The configuration as the Python that makes it, which ``print(config)`` shows, as WMCore's does."""
        lines = ["from WMCore.Configuration import Configuration", "config = Configuration()"]
        for name in self._internal_sections:
            lines.append(f"config.section_({name!r})")
            lines += [f"config.{name}.{key} = {value!r}" for key, value in getattr(self, name).dictionary_().items()]
        return "".join(f"{line}\n" for line in lines)

    def __str__(self) -> str:
        return self.pythonise_()


def _crab_config() -> Configuration:
    """CRABClient.UserUtilities.config(): a Configuration with every section CRAB recognizes."""
    config = Configuration()
    for name in SECTIONS:
        config.section_(name)
    return config


def _username(*_args: Any, **_kwargs: Any) -> str:
    """getUsername / getUsernameFromCRIC: the local user stands in for the CMS user name."""
    return getpass.getuser()


class ClientException(Exception):
    """CRABClient.ClientExceptions.ClientException, the base of CRAB's client errors."""


_EXCEPTIONS = ("TaskNotFoundException", "CachefileNotFoundException", "ConfigException", "InputFileNotFoundException",
               "ConfigurationException", "RESTCommunicationException", "ProxyCreationException",
               "EnvironmentException", "UsernameException", "ProxyException", "UnknownOptionException",
               "SandboxTooBigException", "CommandFailedException", "RESTInterfaceException", "RucioClientException")


CRAB_COMMANDS = ("checkdataset", "checkfile", "checkusername", "checkwrite", "createmyproxy", "getcommand", "getlog",
                 "getoutput", "getsandbox", "kill", "preparelocal", "proceed", "recover", "remake", "remote_copy",
                 "report", "request_type", "resubmit", "setdatasetstatus", "setfilestatus", "status", "submit", "tasks",
                 "uploadlog")
"""The modules of CRABClient.Commands, the names crabCommand takes (crab's command names, not their short names)."""


class _Exceptions(types.ModuleType):
    ConfigurationException: type[ClientException]


def _crab_arguments(args: Sequence[Any], kwargs: dict[str, Any]) -> list[str]:
    """The command line crabCommand makes of its arguments, as CRABAPI.RawCommand does: a keyword
    is its ``--option`` (with its value, or alone for True), then the positional arguments."""
    line: list[str] = []
    for key, value in kwargs.items():
        if isinstance(value, bool):
            line += [f"--{key}"] if value else []
        else:
            line += [f"--{key}", str(value)]
    return line + [str(arg) for arg in args]


def _crab_command(submit: Submit, commands: Commands, exceptions: _Exceptions,
                  api: types.ModuleType) -> Callable[..., Any]:
    def crabCommand(command: str, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 (CRAB's name)
        """CRABAPI.RawCommand.crabCommand: ``submit`` hands the configuration to crabtui's submission,
        another command in ``commands`` gets the call's arguments as crab's command line."""
        if command in commands:
            try:
                return commands[command](_crab_arguments(args, kwargs))
            except CommandFailed as e:
                raise (getattr(exceptions, e.exception, None) or getattr(api, e.exception))(str(e)) from None
        if command not in CRAB_COMMANDS:  # execRaw imports CRABClient.Commands.<command>: short names are not there
            raise api.BadArgumentException(f'Could not find command "{command}"')
        if command != "submit":
            runs = ", ".join(f"crabCommand({name!r})" for name in ("submit", *commands))
            raise ClientException(f"crabCommand({command!r}): crabtui runs {runs} only; run "
                                  f"'{shlex.join(['crabtui', 'task', command, *_crab_arguments(args, kwargs)])}' "
                                  f"instead, the command line this call stands for")
        config = kwargs.get("config")
        if not isinstance(config, Configuration):
            raise exceptions.ConfigurationException(
                f"crabCommand('submit') needs config=<a Configuration object>, as from "
                f"CRABClient.UserUtilities.config(); it was given {type(config).__name__}")
        sections = {name: copy.deepcopy(getattr(config, name).dictionary_()) for name in config.listSections_()}
        if kwargs.get("instance") is not None:  # crab's --instance, over General.instance and checked as it is
            sections.setdefault("General", {})["instance"] = kwargs["instance"]
        try:
            return submit(sections, bool(kwargs.get("dryrun")) or "--dryrun" in args,  # crab submit --dryrun
                          bool(kwargs.get("wait")) or "--wait" in args)  # and --wait
        except SubmitFailed as e:
            raise (exceptions.ConfigurationException if e.configuration else ClientException)(str(e)) from None

    return crabCommand


def _module(name: str, **attributes: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    return module


def _stand_in_modules(submit: Submit, commands: Commands) -> dict[str, types.ModuleType]:
    exceptions = _module("CRABClient.ClientExceptions", ClientException=ClientException)
    for name in _EXCEPTIONS:
        setattr(exceptions, name, type(name, (ClientException,), {"__module__": exceptions.__name__}))
    exceptions.MissingOptionException = type("MissingOptionException", (exceptions.ConfigurationException,),
                                             {"__module__": exceptions.__name__})
    level = [logging.INFO]  # CRAB's console log level; crabtui's own output does not go through it

    def set_console_log_level(lvl: int) -> None:
        level[0] = lvl

    utils = _module("CRABClient.UserUtilities", config=_crab_config, getUsername=_username,
                    getUsernameFromCRIC=_username, getUsernameFromSiteDB=_username,
                    setConsoleLogLevel=set_console_log_level, getConsoleLogLevel=lambda: level[0],
                    # names CRAB's UserUtilities imports, which scripts import from it
                    ClientException=ClientException, LOGLEVEL_MUTE=LOGLEVEL_MUTE, Configuration=Configuration)
    client_utils = _module("CRABClient.ClientUtilities", LOGLEVEL_MUTE=LOGLEVEL_MUTE)
    api_error = type("APIException", (Exception,), {"__module__": "CRABAPI"})  # CRABAPI's own, not CRABClient's
    api = _module("CRABAPI", __path__=[], APIException=api_error,
                  BadArgumentException=type("BadArgumentException", (api_error,), {"__module__": "CRABAPI"}))
    raw = _module("CRABAPI.RawCommand", crabCommand=_crab_command(submit, commands, exceptions, api))
    api.RawCommand = raw
    wmconfig = _module("WMCore.Configuration", Configuration=Configuration, ConfigSection=ConfigSection)
    modules = {"CRABClient": _module("CRABClient", __path__=[], UserUtilities=utils, ClientExceptions=exceptions,
                                     ClientUtilities=client_utils),
               "CRABClient.UserUtilities": utils, "CRABClient.ClientExceptions": exceptions,
               "CRABClient.ClientUtilities": client_utils,
               "CRABAPI": api, "CRABAPI.RawCommand": raw,
               "WMCore": _module("WMCore", __path__=[], Configuration=wmconfig), "WMCore.Configuration": wmconfig,
               "httplib": http.client}
    return modules


def uses_crab_command(text: str) -> bool:
    """Whether the file's code names crabCommand or imports CRABAPI anywhere (a multi-crab script)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "crabCommand":
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "CRABAPI":
            return True
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "CRABAPI" for a in node.names):
            return True
    return False


def _hint(exc: BaseException, source: str = "") -> str:
    """What to do about a failure, where this loader knows something true to say."""
    name = getattr(exc, "name", None)
    python3 = "crabtui runs configurations with Python 3, as CRAB's client does:"
    if isinstance(exc, (NameError, AttributeError)) and name in _PYTHON3_NAMES:
        return f" {name} is Python 2's; {python3} use {_PYTHON3_NAMES[name]}."
    view = _RX_PY2_LIST.search(str(exc)) if isinstance(exc, TypeError) else None
    if view:
        return f" Python 2's {view[1]}() returned a list; {python3} wrap it in list(...) before indexing it."
    if isinstance(exc, AttributeError) and isinstance(getattr(exc, "obj", None), Configuration) \
            and name and not name.endswith("_"):  # WMCore's methods end in _: config.dictionary_() is none
        return (f" WMCore's Configuration has a section only once it is made: add config.section_({name!r}) "
                f"before its parameters.")
    if isinstance(exc, KeyError) and exc.args and exc.args[0] in _CMSENV:
        return (f" {exc.args[0]} is set by cmsenv in a CMSSW area, which crabtui does not need: export it "
                f"before submitting (CMSSW_BASE: the directory of the release area the configuration's paths "
                f"start from), or run crabtui where cmsenv was run.")
    if isinstance(exc, KeyError) and exc.args and _from_environ(exc):
        return (f" The configuration reads the environment variable {exc.args[0]}, which is not set: set it "
                f"for the command, as for crab submit ({exc.args[0]}=... crabtui task submit FILE).")
    if not isinstance(exc, ImportError) or not exc.name:
        return ""
    top = exc.name.split(".")[0]
    if top in _PYTHON3_NAMES:
        return f" {top} is Python 2's; {python3} import {_PYTHON3_NAMES[top]}."
    if top in _CRAB_MODULES:
        return f" Of CRAB's modules, crabtui provides {_STAND_INS}."
    if top in _CMSSW_MODULES:
        pset = _last_file(exc)
        importer = (f" It is imported by {os.path.basename(pset)}, a CMSSW configuration the file imports (crab "
                    f"submit runs under cmsenv): write what the file takes from it (an output file name, an option) "
                    f"into the file itself." if pset and pset != source and pset.endswith(".py") and _psetlike(pset) else "")
        return f" {top} is part of CMSSW, which crabtui does not need and does not provide.{importer}"
    return f" Make the module {exc.name} importable where crabtui runs."


def _syntax_hint(exc: SyntaxError) -> str:
    """What to do about a syntax error: Python 2's print statement and ``except E, name:`` (CRAB's own
    multi-crab example of its Python 2 years caught ``HTTPException, hte``) are named as such."""
    python3 = "crabtui runs configurations with Python 3, as CRAB's client does"
    if exc.msg.startswith("Missing parentheses in call to"):
        return f" This is Python 2; {python3}."
    if isinstance(exc, TabError):
        return f" Python 2 read a tab as 8 spaces; {python3}, which refuses mixed indentation: indent with spaces only."
    old = _RX_PY2_EXCEPT.match(exc.text or "")
    if old:
        return f" This is Python 2's 'except E, name:'; {python3}: write 'except {old[1]} as {old[2]}:'."
    return " Fix the Python syntax there."


_RX_PY2_EXCEPT = re.compile(r"\s*except\s*\(?\s*([\w.]+)\s*\)?\s*,\s*(\w+)\s*:")


def _last_file(exc: BaseException) -> str | None:
    """The file of the exception's last frame."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_filename if tb is not None else None


def _psetlike(path: str) -> bool:
    """Whether ``path`` is a user's file (not Python's, not crabtui's): a pset a configuration imported."""
    return not path.startswith((sys.prefix, sys.base_prefix, os.path.dirname(__file__)))


def _from_environ(exc: KeyError) -> bool:
    """Whether the KeyError was raised by ``os.environ[...]`` (its last frame is in os.py)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_filename in (os.__file__, "<frozen os>")


_LOCK = threading.Lock()  # sys.modules, sys.path and the working directory are process-wide
_ABSENT = object()
_TYPED_IN: list[str] = []  # the directory the command runs in, while a config runs in its own


def typed_in() -> str:
    """The directory the command was typed in, also while a configuration runs in its own: crab
    reads a config's relative paths from there."""
    return _TYPED_IN[-1] if _TYPED_IN else os.getcwd()


def run_config(source: str, submit: Submit, *, main: bool = False, argv: Sequence[str] = (),
               commands: Commands | None = None) -> Loaded:
    """Run the crabConfig.py ``source`` (an absolute path) and return its ``config``'s sections.

    ``crabCommand('submit', config=X)`` calls ``submit`` with ``X``'s sections, and
    ``crabCommand(C, ...)`` the hook ``commands[C]``.  ``main`` runs the file as a script, with
    ``argv`` as its arguments (module docstring)."""
    directory = os.path.dirname(source)
    with open(source, encoding="utf-8", errors="replace") as f:
        multicrab = uses_crab_command(f.read())
    stand_ins = _stand_in_modules(submit, commands or {})
    with _LOCK:
        saved = {name: sys.modules.get(name, _ABSENT) for name in stand_ins}
        before = set(sys.modules)
        cwd, path, args = os.getcwd(), list(sys.path), list(sys.argv)
        _TYPED_IN.append(cwd)
        start_method = multiprocessing.get_start_method(allow_none=True)
        sys.modules.update(stand_ins)
        sys.path.insert(0, directory)
        try:
            os.chdir(directory)
            if main:
                sys.argv[:] = [source, *argv]
                multiprocessing.set_start_method("fork", force=True)  # children inherit the stand-ins
            else:  # what a configuration that reads sys.argv finds under crab submit
                sys.argv[:] = ["crab", "submit", source, *argv]
            namespace = runpy.run_path(source, run_name="__main__" if main else
                                       os.path.splitext(os.path.basename(source))[0])
        except SyntaxError as exc:
            where = f"{exc.filename or source}:{exc.lineno}" if exc.lineno else source
            msg = exc.msg if exc.msg.endswith((".", "?")) else f"{exc.msg}."
            hint = _syntax_hint(exc)
            raise LoadError(f"{where}: Error while loading CRAB configuration {source}: SyntaxError: {msg}{hint}",
                            exc.lineno) from None
        except SystemExit as exc:
            if not main or exc.code not in (None, 0):  # a script's sys.exit() is its normal end
                line = _line(exc, source)
                where = f"{source}:{line}" if line else source
                hint = (f" (This is a multi-crab script that ends itself under crab submit, as one that parses "
                        f"its own arguments does: 'crabtui task submit --multicrab {source} ARGS...' runs it as "
                        f"'python3 {os.path.basename(source)} ARGS...' does and submits each config it passes to "
                        f"crabCommand('submit').)" if multicrab and not main else "")
                raise LoadError(f"{where}: Error while loading CRAB configuration {source}: it called "
                                f"sys.exit({'' if exc.code is None else repr(exc.code)}).{hint}", line) from None
            namespace = {}
        except Exception as exc:  # the file's own code failed: report where
            line = _line(exc, source)
            where = f"{source}:{line}" if line else source
            text = str(exc)
            end = "" if text.endswith((".", "?", "!")) else "."  # a message that ends its own sentence
            raise LoadError(f"{where}: Error while loading CRAB configuration {source}: "
                            f"{type(exc).__name__}: {text}{end}{_hint(exc, source)}", line) from None
        finally:
            os.chdir(cwd)
            _TYPED_IN.pop()
            sys.path[:] = path  # also what the file added
            sys.argv[:] = args
            multiprocessing.set_start_method(start_method, force=True)
            for name in set(sys.modules) - before:  # the helper modules beside the file
                if name not in stand_ins and _beside(sys.modules[name], directory):
                    del sys.modules[name]
            for name, module in saved.items():
                if module is _ABSENT:
                    sys.modules.pop(name, None)
                else:
                    sys.modules[name] = module
    config = next((value for value in namespace.values() if isinstance(value, Configuration)),
                  namespace.get("config"))  # as WMCore's loadConfigurationFile: the first, whatever its name
    if not isinstance(config, Configuration):
        what = "defines no 'config'" if config is None else f"sets 'config' to a {type(config).__name__}"
        return Loaded(None, multicrab, what)
    return Loaded({name: getattr(config, name).dictionary_() for name in config.listSections_()}, multicrab)


def _line(exc: BaseException, source: str) -> int | None:
    """The line of ``source`` that the exception last passed through."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == source:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _beside(module: types.ModuleType | None, directory: str) -> bool:
    path = getattr(module, "__file__", None)
    return bool(path) and os.path.abspath(path).startswith(directory + os.sep)
