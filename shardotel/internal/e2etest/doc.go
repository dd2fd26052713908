// Package e2etest drives shardotel through the real emitters of its
// hooks, a sqlhook connector and the GORM plugin, on embedded SQLite, and
// shows the whole chain, sqlhook to a Prometheus page, in an example. It
// is a module of its own, holding tests only, so that sqlhook, GORM, their
// SQL parsers and the SQLite drivers stay out of shardotel's go.mod (and
// so out of the module graph of every program using shardotel).
package e2etest
