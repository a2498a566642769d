"""The attention model's own figures (Kool et al. 2019): its encoder's attention, and one
REINFORCE step against the greedy rollout."""
