package dev.nodelet.launcher;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * The demo: the embedded Kubernetes API server and the demo world on it, what the launcher serves when no cluster is
 * given. Its implementation and the server's jars are in {@code lib/demo}, loaded by {@link DemoLoader} in demo mode
 * only: a launcher serving a cluster never opens them.
 */
public interface Demo extends AutoCloseable {

  /** Starts the server, HTTPS with HTTP/2, on loopback at {@code port} (0: a free one). */
  void start(int port) throws IOException;

  /** The server's URL. */
  String url();

  /** Writes a kubeconfig of the server (its CA, an admin token) to {@code file}, mode 0600; returns it. */
  Path writeKubeconfig(Path file) throws IOException;

  /** The PEM of the CA of the server's kubelet client certificate: the client CA of the demo node's API. */
  String kubeletClientCaPem();

  /** Creates the demo world: node {@code nodeName}, its pods and the ConfigMaps and Secrets they reference. */
  void seed(String nodeName);

  /** The number of ConfigMaps and Secrets the demo pods of this node reference. */
  int referencedObjects();

  /** The factory configurations (keyed {@code factoryPid~name}) of the demo's example DRA driver. */
  Map<String, Map<String, Object>> factoryConfiguration();

  /** One line: what the demo world holds for this node. */
  String summary(String nodeName);

  /** Waits for the example driver's devices to be published as this node's ResourceSlices; one line. */
  String awaitSlices(String nodeName, Duration timeout);

  /** Stops the server. */
  @Override
  void close();
}
