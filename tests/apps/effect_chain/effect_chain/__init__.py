"""effect_chain: a signal passes through fixed filter stages, then through the effects a user picked."""
