"""The beam search stopping rules (decode.py states them; the runtime's SearchOptions::beam_stop
in include/headwise/headwise.hpp has the same three) and the default, the runtime's. Kept apart
from decode.py so that the command line (cli_support.add_search) names them without importing
torch."""

BEAM_STOPS = ("exhaustive", "top-eos", "outscored")
DEFAULT_BEAM_STOP = "exhaustive"
