"""The DAG input language: model, parser, writer, lifted graph and rescue DAGs."""

from engine.dag.errors import DagError, Diagnostic, Location
from engine.dag.graph import Graph, GraphNode, build_graph, load_graph
from engine.dag.model import Dag, Node, NodeKind, Script, ScriptKind, Var, VarsPlacement
from engine.dag.parser import parse_file, parse_text
from engine.dag.writer import format_dag, write_dag

__all__ = [
    "Dag", "DagError", "Diagnostic", "Graph", "GraphNode", "Location", "Node", "NodeKind",
    "Script", "ScriptKind", "Var", "VarsPlacement", "build_graph", "format_dag", "load_graph",
    "parse_file", "parse_text", "write_dag",
]
