"""Counts of a model: parameters, KV bytes per layer kind, FLOPs, memory; each formula once.

Rooms of cost/ (docs/layout.md): spec <- counts <- time <- serving; arrows point down only."""
