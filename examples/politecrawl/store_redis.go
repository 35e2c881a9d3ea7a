package main

// The Redis backend of the state (store.redis): its section of the
// configuration, and how it opens.

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/store/redis"
)

// RedisConfig is the Redis every worker of a crawl shares.
type RedisConfig struct {
	// Addr is the server's "host:port". Required.
	Addr string `json:"addr"`
	// Prefix starts every key, so several crawls can share one server.
	// "": redis.DefaultPrefix ("politefetch:").
	Prefix string `json:"prefix"`
	// Username is the ACL user. "": the default user.
	Username string `json:"username"`
	// Password is a reference, "env:NAME" or "file:PATH", never the
	// password itself. "": none.
	Password string `json:"password"`
	// DB is the database number. 0: the first.
	DB int `json:"db"`
	// Timeout bounds each call to Redis; a call past it is a refusal.
	// 0: redis.DefaultTimeout (2s); from 100ms to 1m.
	Timeout crawl.Duration `json:"timeout"`
}

// timeout is Timeout or its default.
func (r *RedisConfig) timeout() time.Duration {
	if r.Timeout == 0 {
		return redis.DefaultTimeout
	}
	return time.Duration(r.Timeout)
}

// prefix is Prefix or its default.
func (r *RedisConfig) prefix() string {
	if r.Prefix == "" {
		return redis.DefaultPrefix
	}
	return r.Prefix
}

// check validates the section, and makes a file: password relative to the
// config's folder.
func (r *RedisConfig) check(c *Config, key string) error {
	if r.Addr == "" {
		return c.errAt(key+".addr", "required: the server's host:port, e.g. 127.0.0.1:6379")
	}
	host, port, err := net.SplitHostPort(r.Addr)
	if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
		return c.errAt(key+".addr", "%q: want host:port, e.g. 127.0.0.1:6379", r.Addr)
	}
	if strings.ContainsAny(r.Prefix, "{} \t\r\n") {
		return c.errAt(key+".prefix", "%q: no braces (every key's subject is a Redis Cluster hash tag) and no spaces", r.Prefix)
	}
	if r.Password != "" {
		kind, ref, _ := strings.Cut(r.Password, ":")
		if (kind != "env" && kind != "file") || ref == "" {
			// Never echo the value: it may be the password itself.
			return c.errAt(key+".password", "an inline password is refused: give a reference, env:NAME or file:PATH")
		}
		if kind == "file" {
			r.Password = "file:" + c.rel(ref)
		}
	}
	if r.DB < 0 {
		return c.errAt(key+".db", "%d: a database number is 0 or more", r.DB)
	}
	if d := time.Duration(r.Timeout); d != 0 && (d < 100*time.Millisecond || d > time.Minute) {
		return c.errAt(key+".timeout", "%v: from 100ms to 1m", d)
	}
	return nil
}

// where names the server, its database and prefix.
func (r *RedisConfig) where() string {
	return fmt.Sprintf("redis %s db %d prefix %q", r.Addr, r.DB, r.prefix())
}

// passwordValue reads the password from where Password points; "" when
// none is set.
func (r *RedisConfig) passwordValue() (string, error) {
	if r.Password == "" {
		return "", nil
	}
	v, err := crawl.CredentialRef{Header: "store.redis.password", Value: r.Password}.Resolve()
	if err != nil {
		return "", fmt.Errorf("store redis %s: %w", r.Addr, err)
	}
	return v, nil
}

// open connects to the server and checks that it answers, so an
// unreachable server is an error naming its address and what the OS said.
func (r *RedisConfig) open(ctx context.Context) (backend, error) {
	pw, err := r.passwordValue()
	if err != nil {
		return nil, err
	}
	// go-redis logs its pool's failed dials to stderr, through one logger
	// for the whole process: silenced, since the crawl says once when
	// Redis stops answering (watch) and every failed call is an error the
	// layers report.
	logging.Disable()
	timeout := r.timeout()
	rc := goredis.NewClient(&goredis.Options{
		Addr:                  r.Addr,
		Username:              r.Username,
		Password:              pw,
		DB:                    r.DB,
		DialTimeout:           timeout,
		ReadTimeout:           timeout,
		WriteTimeout:          timeout,
		ContextTimeoutEnabled: true, // a call ends at its deadline: the store refuses a client without
		MaxRetries:            -1,   // a failed call is a refusal, not retried behind the schedule's back
	})
	b := &redisBackend{Store: &redis.Store{Client: rc, Prefix: r.Prefix, Timeout: timeout}, rc: rc, server: r.Addr}
	if err := b.ping(ctx); err != nil {
		rc.Close()
		return nil, err
	}
	return b, nil
}

// redisBackend is a redis.Store and the client it owns.
type redisBackend struct {
	*redis.Store
	rc     *goredis.Client
	server string
}

// Close closes the connection.
func (b *redisBackend) Close() error { return b.rc.Close() }

// ping asks Redis for an answer within the store's timeout.
func (b *redisBackend) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, b.Timeout)
	defer cancel()
	if err := b.rc.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("store redis %s: %w", b.server, err)
	}
	return nil
}

func (b *redisBackend) name() string { return "redis" }
func (b *redisBackend) addr() string { return b.server }
