"""A stub: the comparison checks that the suite's interpreter imports it."""
