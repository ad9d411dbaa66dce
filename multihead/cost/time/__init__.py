"""Time: the fitted GPU-time model (phases, communication, fixed costs, intervals), the CPU profile model.

Rooms of cost/ (docs/layout.md): spec <- counts <- time <- serving; arrows point down only."""
