"""The model as the cost model reads it: ModelSpec, the config.json readers, quantization, precision, positions.

Rooms of cost/ (docs/layout.md): spec <- counts <- time <- serving; arrows point down only."""
