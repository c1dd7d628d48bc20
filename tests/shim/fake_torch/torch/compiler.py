COMPILING = [False]


def is_compiling():
    return COMPILING[0]
