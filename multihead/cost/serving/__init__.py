"""One memory account per engine (vllm.py, sglang.py), the serving answer and the data door (fitted.py).

Rooms of cost/ (docs/layout.md): spec <- counts <- time <- serving; arrows point down only."""
