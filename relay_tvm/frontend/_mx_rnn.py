"""placeholder"""
RNN_CONVERTERS = {}
