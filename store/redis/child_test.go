package redis

const childEnv = "POLITEFETCH_REDIS_CHILD"

func childMain() int { return 0 }
