"""Names that count the operations made on them: linear-time checks without timing."""


class CountingName(str):
    """A joint name that counts the comparisons and hashes made on it."""

    ops = 0

    def __eq__(self, other):
        CountingName.ops += 1
        return str.__eq__(self, other)

    def __hash__(self):
        CountingName.ops += 1
        return str.__hash__(self)
