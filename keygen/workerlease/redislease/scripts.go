package redislease

import "github.com/redis/go-redis/v9"

// The Lua scripts below are the only way the package writes to Redis: each
// runs atomically on the server, reads the server's clock (TIME) and never
// the client's, and writes whole numbers with %d (Lua's own conversion
// prints 16-digit numbers in exponent form).
//
// Keys of a namespace, all under one hash tag ({prefix:namespace}):
//
//	base:ns      hash: since (Unix ms from which the namespace's state is
//	             known whole), run (run_id of the server that set since)
//	base:fence   counter of fencing tokens (INCR)
//	base:ids     sorted set of every worker id ever claimed (for List)
//	base:id:W    the holder's owner token, with PX expiry: the lock
//	base:rec:W   hash, no expiry: owner (token of the last claim, "" once
//	             released), exp (Unix ms the last claim or renewal runs
//	             out, or the release time), last (latest issued time the
//	             holder reported, Unix ms), until (the end of the holder's
//	             own validity on its own clock, Unix ms rounded up, the
//	             largest its claim and renewals sent; 0 once released),
//	             fence, prev (LastUsed handed to the last claim)

// luaPrelude is shared by the scripts: now is the server's time in Unix
// milliseconds, d formats a number as an integer.
const luaPrelude = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function d(n) return string.format('%d', n) end
`

// claimScript claims the lowest free worker id whose last use is not later
// than the server's clock, else the free id usable soonest.
//
// KEYS: ns, fence, ids. ARGV: base, token, ttl ms, max worker, quarantine
// ms, the claimant's validity end (its clock, Unix ms).
//
// Replies {'ok', worker, fence, lastUsedMs, nowMs}, {'wait', ms},
// {'full'} or {'evicts', policy}.
//
// The namespace's state is trusted only from since + quarantine on. since
// is set when the script finds no ns hash, or a run_id other than the
// server's own. No ns hash: the namespace is new, or its state was lost
// (a restart without persistence, FLUSHDB, FLUSHALL, a DEL), which Redis
// cannot tell apart; since is now, or the server's start (read from INFO,
// rounded up) when the server surely started less than the quarantine
// ago, as then no lease of this server's run can have been granted in the
// namespace yet. Another run_id: the hash came from a snapshot, an AOF
// file or a replica promoted by failover, possibly stale, so since is now.
// An id run out without a release was last used no earlier than the
// largest of its holder's reported last use, its expiry on the server's
// clock, and its holder's validity end on the holder's clock: a holder
// whose clock runs ahead of the server's issues keys timed after the
// server's expiry.
// Holders from before since stop issuing within TTL of their last
// renewal, which reached the old state before since. The fencing counter
// then restarts above the server's clock in microseconds, so tokens keep
// increasing across a loss.
var claimScript = redis.NewScript(luaPrelude + `
local mem = redis.call('INFO', 'memory')
local policy = string.match(mem, 'maxmemory_policy:([%w%-]+)')
if policy and string.sub(policy, 1, 8) == 'allkeys-' then
	return {'evicts', policy}
end
local srv = redis.call('INFO', 'server')
local run = string.match(srv, 'run_id:(%x+)') or ''
local up = tonumber(string.match(srv, 'uptime_in_seconds:(%d+)') or '0')
local base, token = ARGV[1], ARGV[2]
local ttl, maxw, q = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local validEnd = tonumber(ARGV[6])
local ns = redis.call('HMGET', KEYS[1], 'since', 'run')
local since = tonumber(ns[1])
if since == nil or ns[2] ~= run then
	if since == nil and (up + 1) * 1000 <= q then
		since = now - up * 1000 + 1000
	else
		since = now
	end
	redis.call('HSET', KEYS[1], 'since', d(since), 'run', run)
	local us = tonumber(t[1]) * 1000000 + tonumber(t[2])
	local f = tonumber(redis.call('GET', KEYS[2]) or '0')
	if f < us then
		redis.call('SET', KEYS[2], d(us))
	end
end
if now < since + q then
	return {'wait', since + q - now}
end
-- Free ids whose last use is later than now (a holder whose clock ran
-- ahead) are claimed last, the soonest usable first: a generator refuses
-- or waits on such an id.
local later, laterAt = nil, nil
local function claim(w, last, prev)
	if since + ttl > prev then
		prev = since + ttl
	end
	local fence = redis.call('INCR', KEYS[2])
	redis.call('SET', base .. ':id:' .. d(w), token, 'PX', ttl)
	redis.call('HSET', base .. ':rec:' .. d(w), 'owner', token, 'exp', d(now + ttl), 'last', d(last), 'until', d(validEnd), 'fence', d(fence), 'prev', d(prev))
	redis.call('ZADD', KEYS[3], w, d(w))
	return {'ok', w, fence, prev, now}
end
for w = 0, maxw do
	local k = base .. ':id:' .. d(w)
	local rk = base .. ':rec:' .. d(w)
	local v = redis.call('GET', k)
	if v == token then
		-- a retried claim whose first try took this id
		local r = redis.call('HMGET', rk, 'fence', 'prev')
		return {'ok', w, tonumber(r[1] or '0'), tonumber(r[2] or '0'), now}
	end
	if not v then
		local r = redis.call('HMGET', rk, 'owner', 'exp', 'last', 'until')
		local owner = r[1] or ''
		local exp = tonumber(r[2] or '0')
		local last = tonumber(r[3] or '0')
		local held = tonumber(r[4] or '0')
		-- A record naming an owner whose lease has not run out means the
		-- key vanished (deleted, evicted): still held.
		if owner == '' or exp <= now then
			local prev = last
			if owner ~= '' and exp > prev then
				prev = exp
			end
			if owner ~= '' and held > prev then
				prev = held
			end
			if prev <= now then
				return claim(w, last, prev)
			end
			if later == nil or prev < laterAt[2] then
				later, laterAt = w, {last, prev}
			end
		end
	end
end
if later ~= nil then
	return claim(later, laterAt[1], laterAt[2])
end
return {'full'}
`)

// renewScript extends a lease while its key still holds the lease's token
// and the server cannot evict it.
//
// KEYS: id, rec. ARGV: token, ttl ms, last issued ms, the holder's
// validity end (its clock, Unix ms). Replies 1 when renewed, 0 when the
// key is gone or names another holder, -1 when the maxmemory-policy is an
// allkeys-* one (set since the claim): such a server may evict the key
// and its record at any time, so the lease counts as lost.
var renewScript = redis.NewScript(luaPrelude + `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
	return 0
end
local policy = string.match(redis.call('INFO', 'memory'), 'maxmemory_policy:([%w%-]+)')
if policy and string.sub(policy, 1, 8) == 'allkeys-' then
	return -1
end
local ttl = tonumber(ARGV[2])
redis.call('PEXPIRE', KEYS[1], ttl)
local last = tonumber(redis.call('HGET', KEYS[2], 'last') or '0')
local l = tonumber(ARGV[3])
if l > last then
	last = l
end
-- The recorded validity end never moves back: keys may have been issued
-- up to the earlier one by a clock since stepped back.
local validEnd = tonumber(redis.call('HGET', KEYS[2], 'until') or '0')
local u = tonumber(ARGV[4])
if u > validEnd then
	validEnd = u
end
redis.call('HSET', KEYS[2], 'exp', d(now + ttl), 'last', d(last), 'until', d(validEnd))
return 1
`)

// releaseScript frees a worker id while its key still holds the lease's
// token, recording the last issued time.
//
// KEYS: id, rec. ARGV: token, last issued ms. Replies 1 when released, 0
// when the key was not the lease's any more.
var releaseScript = redis.NewScript(luaPrelude + `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
	return 0
end
redis.call('DEL', KEYS[1])
local last = tonumber(redis.call('HGET', KEYS[2], 'last') or '0')
local l = tonumber(ARGV[2])
if l > last then
	last = l
end
redis.call('HSET', KEYS[2], 'owner', '', 'exp', d(now), 'last', d(last), 'until', '0')
return 1
`)

// listScript reads every worker id ever claimed in a namespace, writing
// nothing.
//
// KEYS: ids. ARGV: base. Replies {nowMs, {worker, holder token or ”,
// PTTL, owner, exp, last, fence}...}.
var listScript = redis.NewScript(luaPrelude + `
local base = ARGV[1]
local out = {now}
for _, w in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
	local k = base .. ':id:' .. w
	local v = redis.call('GET', k) or ''
	local pttl = redis.call('PTTL', k)
	local r = redis.call('HMGET', base .. ':rec:' .. w, 'owner', 'exp', 'last', 'fence')
	out[#out + 1] = {tonumber(w), v, pttl, r[1] or '', tonumber(r[2] or '0'), tonumber(r[3] or '0'), tonumber(r[4] or '0')}
end
return out
`)
