/**
 * The object cache's core for plain Java programs and tests: {@link dev.nodelet.cache.core.ObjectManagers} builds the
 * ConfigMap and Secret managers (the kubelet's {@code cacheBasedManager}, switchable between store strategies at
 * runtime), {@link dev.nodelet.cache.core.FanOut} the watch fan-out on its own, {@link dev.nodelet.cache.core.GetStrategy}
 * the built-in {@code get} strategy; {@link dev.nodelet.cache.core.ReferencedNames} finds the names a pod references
 * and {@link dev.nodelet.cache.core.ApiServerErrors} words API server failures for stores. Each takes an injectable
 * {@link java.time.Clock}, and managers and fan-outs can run without a timer thread ({@code manualTicks()}) so that a
 * test decides when time passes.
 */
@Export
@Version("1.1.0")
package dev.nodelet.cache.core;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
