"""A card room for friends: Posso, Possession, Possum and Big Two."""
