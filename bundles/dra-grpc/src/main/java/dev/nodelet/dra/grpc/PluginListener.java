package dev.nodelet.dra.grpc;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Receives the drivers that a {@link PluginWatcher} registered.
 *
 * @since 1.0
 */
@ConsumerType
@FunctionalInterface
public interface PluginListener {

  /**
   * A registration socket passed the handshake (the driver was told it is registered). Called on the watcher's
   * thread, one registration at a time; the watcher scans the folder again only once this returns.
   *
   * <p>A {@link RuntimeException} thrown here refuses the registration and nothing else: the plugin's connection is
   * closed, the driver is listed by {@link PluginWatcher#failedRegistrations()} with the reason
   * {@code the listener refused DRA driver <name>: <exception class>: <message>}, and is not handed over again
   * until its socket is replaced or its mode changes; the watcher goes on with the other sockets. The listener may
   * call {@link PluginWatcher#failedRegistrations()} and {@link PluginWatcher#nextScan()} (without waiting on the
   * future: the next scan starts only once this returns).
   *
   * @param plugin the driver, whose role objects may be used until the returned action runs
   * @return what to do once the registration is withdrawn (its socket went away, was replaced, the driver was
   *     unreachable too long, or the watcher closed); run once, on the watcher's thread, before the plugin's
   *     connection is closed
   */
  Runnable registered(RegisteredPlugin plugin);
}
