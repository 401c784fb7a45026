/**
 * The controller runtime of Nodelet, in the shape of client-go's {@code workqueue} and {@code flowcontrol}: a
 * deduplicating {@link dev.nodelet.controller.WorkQueue}, {@link dev.nodelet.controller.RateLimiter}s, an
 * exponential {@link dev.nodelet.controller.Backoff} and a {@link dev.nodelet.controller.Scheduler} (a thread of its
 * own in production, {@link dev.nodelet.controller.DrivableScheduler} in tests). Bnd copies this package into each
 * bundle that uses it, privately: it is never exported.
 */
package dev.nodelet.controller;
