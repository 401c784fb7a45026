package dev.nodelet.metrics.internal;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * A validated {@link MetricsConfiguration}.
 *
 * @param port the port, 0 for any free one
 * @param address the address to listen on
 */
record MetricsSettings(int port, InetAddress address) {

  static final int DEFAULT_PORT = 9464;
  static final String DEFAULT_ADDRESS = "127.0.0.1";

  static MetricsSettings of(MetricsConfiguration config) {
    int port = config.port();
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port: must be 0 (any free port) to 65535, was " + port);
    }
    String address = config.address() == null ? "" : config.address().strip();
    if (address.isEmpty()) {
      throw new IllegalArgumentException("address: must be an IP address or host name, e.g. "
          + DEFAULT_ADDRESS + "; was empty");
    }
    try {
      return new MetricsSettings(port, InetAddress.getByName(address));
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("address: '" + address + "' is not an IP address or a known host name,"
          + " e.g. " + DEFAULT_ADDRESS, e);
    }
  }
}
