package dev.nodelet.dra.grpc.internal;

import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.grpc.PluginListener;
import dev.nodelet.dra.grpc.RegisteredPlugin;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What a {@link dev.nodelet.dra.grpc.PluginWatcher} runs: the transport, the handshake and the folder watch of one
 * set of settings, handing every registration to a listener.
 */
public final class PluginWatch implements AutoCloseable {

  private final Transport transport;
  private final RegistrationWatcher watcher;

  public PluginWatch(Path folder, Duration pollInterval, Duration handshakeTimeout, Duration callTimeout,
      Duration withdrawUnreachableAfter, int ioThreads, PluginListener listener) {
    this.transport = new Transport(ioThreads);
    Registrar registrar = new Registrar(transport, handshakeTimeout, callTimeout);
    this.watcher = new RegistrationWatcher(folder, pollInterval, withdrawUnreachableAfter, registrar,
        (driver, socket) -> listener.registered(new PublishedPlugin(driver, socket)));
  }

  public void start() {
    watcher.start();
  }

  public List<DriverStatus> failedRegistrations() {
    return watcher.failedRegistrations();
  }

  public CompletableFuture<Void> nextScan() {
    return watcher.nextScan();
  }

  /** The service object of a registration handed out by a watch: it implements the plugin's roles. */
  public static Object service(RegisteredPlugin plugin) {
    return ((PublishedPlugin) plugin).driver;
  }

  /** The names of the role interfaces the plugin's {@link #service} is registered under. */
  public static List<String> roles(RegisteredPlugin plugin) {
    return ((PublishedPlugin) plugin).driver.roles();
  }

  @Override
  public void close() {
    watcher.close();
    transport.close();
  }
}
