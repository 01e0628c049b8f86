// Package usage adapts node-usage readers to the engine's UsageSource:
// Influx reads Telegraf's measurements through the collector (Flux).
package usage
