"""The assist daemon and its client side, in layers (see the README's "How it is built").

Shared by both sides: ``protocol`` (the wire types), ``settings``, ``errors`` (typed errors),
``language`` (facts per language) and ``tokens`` (the tokens file). The server's layers import
only downwards: ``http`` → ``answers`` / ``repair`` → ``pipeline`` → ``engine``, ``checks``,
``store``, ``prompt``, ``observe``. The client side (``client``, ``workspace``, ``cli``) never
imports the engine.
"""

__version__ = "0.1.0"
