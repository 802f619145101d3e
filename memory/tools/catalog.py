"""Imports every tool module so each registers its tools, in manifest order:
search and save first, the tools an agent needs most."""

# isort: skip_file
from memory.tools import search  # noqa: F401
from memory.tools import write  # noqa: F401
from memory.tools import browse  # noqa: F401
from memory.tools import care  # noqa: F401
from memory.tools import profile  # noqa: F401
from memory.tools import guide  # noqa: F401
from memory.tools import palace  # noqa: F401
