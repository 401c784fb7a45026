package dev.nodelet.launcher.demo;

import dev.nodelet.launcher.Demo;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * The demo on the embedded API server. Only the launcher's demo class loader loads it, from
 * {@code lib/demo/nodelet-launcher-demo.jar}, with the server's jars beside it.
 */
public final class EmbeddedDemo implements Demo {

  private EmbeddedApiServer server;

  @Override
  public void start(int port) {
    server = EmbeddedApiServer.builder().tls().port(port).build().start();
  }

  @Override
  public String url() {
    return server.url();
  }

  @Override
  public Path writeKubeconfig(Path file) {
    return server.writeKubeconfig(file);
  }

  @Override
  public String kubeletClientCaPem() {
    return server.kubeletClientCaPem();
  }

  @Override
  public void seed(String nodeName) {
    DemoCluster.seed(server, nodeName);
  }

  @Override
  public int referencedObjects() {
    return DemoCluster.REFERENCED_OBJECTS;
  }

  @Override
  public Map<String, Map<String, Object>> factoryConfiguration() {
    return Map.of(DemoCluster.DRIVER_PID + "~demo", DemoCluster.driverConfiguration());
  }

  @Override
  public String summary(String nodeName) {
    return DemoCluster.summary(server, nodeName);
  }

  @Override
  public String awaitSlices(String nodeName, Duration timeout) {
    return DemoCluster.awaitSlices(server, nodeName, timeout);
  }

  @Override
  public void close() {
    if (server != null) {
      server.close();
    }
  }
}
