package dev.nodelet.itests;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP proxy in front of the API server, so that a test inside the OSGi container can take the API server away from
 * Nodelet (every connection cut, new ones refused) and bring it back on the same port. Real sockets, bytes passed
 * unchanged.
 */
final class TcpProxy implements AutoCloseable {

  private final InetSocketAddress target;
  private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
  private volatile ServerSocket server;
  private int port;

  TcpProxy(String host, int targetPort) {
    this.target = new InetSocketAddress(host, targetPort);
  }

  /** Listens (again, on the same port after {@link #stop()}). */
  synchronized TcpProxy start() throws IOException {
    ServerSocket listening = new ServerSocket();
    listening.setReuseAddress(true);
    listening.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50);
    port = listening.getLocalPort();
    server = listening;
    Thread acceptor = new Thread(() -> accept(listening), "itest-proxy-accept");
    acceptor.setDaemon(true);
    acceptor.start();
    return this;
  }

  int port() {
    return port;
  }

  private void accept(ServerSocket listening) {
    while (!listening.isClosed()) {
      try {
        Socket client = listening.accept();
        Socket upstream = new Socket();
        upstream.connect(target, 5000);
        sockets.add(client);
        sockets.add(upstream);
        pipe(client, upstream);
        pipe(upstream, client);
      } catch (IOException e) {
        // closed by stop(), or the API server refused: the client sees its connection end
      }
    }
  }

  private void pipe(Socket from, Socket to) {
    Thread thread = new Thread(() -> {
      byte[] buffer = new byte[16384];
      try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
        int read;
        while ((read = in.read(buffer)) >= 0) {
          out.write(buffer, 0, read);
          out.flush();
        }
      } catch (IOException e) {
        // one side went away
      } finally {
        close(from);
        close(to);
      }
    }, "itest-proxy-pipe");
    thread.setDaemon(true);
    thread.start();
  }

  /** Stops listening and cuts every connection. */
  synchronized void stop() {
    ServerSocket listening = server;
    if (listening != null) {
      close(listening);
    }
    sockets.forEach(TcpProxy::close);
    sockets.clear();
  }

  private static void close(AutoCloseable closeable) {
    try {
      closeable.close();
    } catch (Exception e) {
      // already closed
    }
  }

  @Override
  public void close() {
    stop();
  }
}
