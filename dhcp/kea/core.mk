# The hook core: parameters, the table and the answers, the store follower.
