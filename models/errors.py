"""The one kind of error a caller can fix by changing its input."""


class InvalidInput(ValueError):
    """Input a model cannot take (an α nobody trained, too few points, a word in characters the
    model never saw); the message is the sentence that says what to change. Any other
    exception out of models/ is a fault of ours, never worded as the caller's."""
