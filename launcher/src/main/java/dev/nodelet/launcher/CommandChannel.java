package dev.nodelet.launcher;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.osgi.framework.BundleContext;

/**
 * The local command channel: a unix socket, readable and writable by this user only, on which one connection runs
 * one Gogo command line and receives its output. It is what {@code --exec} talks to, so the {@code nodelet:*}
 * commands work where there is no console (a DaemonSet pod: {@code kubectl exec}). Nothing listens on the network.
 *
 * <p>The request is the command line and a newline; the answer is a sequence of frames, each a tag byte, a length
 * and the bytes: {@code o} standard output, {@code e} standard error, and last {@code x} with the exit status (0 the
 * command succeeded, 1 it failed). The command is interrupted when the client goes away.
 */
final class CommandChannel implements AutoCloseable {

  static final String SOCKET = "nodelet.sock";
  private static final int MAX_LINE = 64 * 1024;
  private static final Set<PosixFilePermission> OTHERS = EnumSet.of(PosixFilePermission.GROUP_READ,
      PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_READ,
      PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

  private final Path socket;
  private final ServerSocketChannel server;
  private final Thread acceptor;
  private final Set<SocketChannel> connections = ConcurrentHashMap.newKeySet();

  private CommandChannel(Path socket, ServerSocketChannel server, BundleContext context, GogoSessions gogo) {
    this.socket = socket;
    this.server = server;
    this.acceptor = new Thread(() -> accept(context, gogo), "nodelet-command-channel");
    this.acceptor.setDaemon(true);
  }

  /**
   * Refuses a run folder that exists and is open to other users; the launcher asks before it starts anything, so
   * that the refusal comes at once.
   *
   * @throws IOException naming the folder, its mode and what to give instead
   */
  static void checkRunFolder(Path runDir) throws IOException {
    if (Files.isDirectory(runDir)) {
      // never chmod a folder the user gave (--run /tmp would lock everybody else out of it): refuse a shared one
      Set<PosixFilePermission> mode = Files.getPosixFilePermissions(runDir);
      if (!Collections.disjoint(mode, OTHERS)) {
        throw new IOException("the run folder " + runDir.toAbsolutePath() + " is open to other users (mode "
            + PosixFilePermissions.toString(mode) + "): give --run a folder of mode 0700, or one that does not exist");
      }
    }
  }

  /** Binds {@code <runDir>/nodelet.sock} (mode 0600, in a folder of mode 0700) and starts serving. */
  static CommandChannel open(Path runDir, BundleContext context, GogoSessions gogo) throws IOException {
    checkRunFolder(runDir);
    if (!Files.isDirectory(runDir)) {
      Files.createDirectories(runDir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(
          "rwx------")));
    }
    Path socket = runDir.toAbsolutePath().resolve(SOCKET);
    if (Files.exists(socket)) {
      try (SocketChannel probe = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
        throw new IOException("another Nodelet already serves commands on " + socket);
      } catch (IOException e) {
        if (e.getMessage() != null && e.getMessage().startsWith("another Nodelet")) {
          throw e;
        }
        Files.delete(socket); // left behind by a Nodelet that did not stop cleanly
      }
    }
    ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    server.bind(UnixDomainSocketAddress.of(socket));
    Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
    CommandChannel channel = new CommandChannel(socket, server, context, gogo);
    channel.acceptor.start();
    return channel;
  }

  Path socket() {
    return socket;
  }

  private void accept(BundleContext context, GogoSessions gogo) {
    while (server.isOpen()) {
      try {
        SocketChannel connection = server.accept();
        connections.add(connection);
        Thread worker = new Thread(() -> serve(connection, context, gogo), "nodelet-command");
        worker.setDaemon(true);
        worker.start();
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private void serve(SocketChannel connection, BundleContext context, GogoSessions gogo) {
    try (connection) {
      // not Channels.newInputStream/newOutputStream: they share one lock, and a blocked read would stop writes
      InputStream in = input(connection);
      DataOutputStream frames = new DataOutputStream(output(connection));
      String line = readLine(in);
      int status = 0;
      AtomicReference<Runnable> interrupt = new AtomicReference<>();
      // the client sends nothing after its line; end of input means it went away
      Thread watcher = new Thread(() -> {
        try {
          while (in.read() >= 0) {
            // ignore
          }
        } catch (IOException e) {
          // closed
        }
        Runnable r = interrupt.get();
        if (r != null) {
          r.run();
        }
      }, "nodelet-command-client");
      watcher.setDaemon(true);
      watcher.start();
      try (PrintStream err = new PrintStream(new FrameStream(frames, 'e'), true, StandardCharsets.UTF_8)) {
        try {
          gogo.execute(context, line, new ByteArrayInputStream(new byte[0]), new FrameStream(frames, 'o'), err,
              interrupt::set);
        } catch (Exception e) {
          err.println(e.getMessage() == null ? e.toString() : e.getMessage());
          status = 1;
        }
      }
      synchronized (frames) {
        frames.writeByte('x');
        frames.writeInt(4);
        frames.writeInt(status);
        frames.flush();
      }
    } catch (IOException e) {
      // the client went away
    } finally {
      connections.remove(connection);
    }
  }

  private static InputStream input(SocketChannel channel) {
    return new InputStream() {
      @Override
      public int read() throws IOException {
        byte[] one = new byte[1];
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
      }

      @Override
      public int read(byte[] b, int off, int len) throws IOException {
        int n;
        do {
          n = channel.read(ByteBuffer.wrap(b, off, len));
        } while (n == 0 && len > 0);
        return n;
      }
    };
  }

  private static OutputStream output(SocketChannel channel) {
    return new OutputStream() {
      @Override
      public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
      }

      @Override
      public void write(byte[] b, int off, int len) throws IOException {
        ByteBuffer buffer = ByteBuffer.wrap(b, off, len);
        while (buffer.hasRemaining()) {
          channel.write(buffer);
        }
      }
    };
  }

  private static String readLine(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    byte[] buffer = new byte[MAX_LINE];
    int length = 0;
    for (int b; (b = in.read()) >= 0 && b != '\n'; ) {
      if (length == MAX_LINE) {
        throw new IOException("command line too long");
      }
      buffer[length++] = (byte) b;
    }
    line.append(new String(buffer, 0, length, StandardCharsets.UTF_8));
    return line.toString().trim();
  }

  @Override
  public void close() {
    try {
      server.close();
    } catch (IOException e) {
      // closing anyway
    }
    for (SocketChannel connection : connections) {
      try {
        connection.close();
      } catch (IOException e) {
        // closing anyway
      }
    }
    try {
      acceptor.join(5_000);
      Files.deleteIfExists(socket);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException e) {
      System.err.println("nodelet: cannot delete " + socket + ": " + e.getMessage());
    }
  }

  /**
   * {@code --exec}: sends one command line to the Nodelet serving {@code <runDir>/nodelet.sock}, copies its output
   * to {@code out} and {@code err} and returns its exit status.
   */
  static int exec(Path runDir, String line, PrintStream out, PrintStream err) {
    Path socket = runDir.toAbsolutePath().resolve(SOCKET);
    if (!Files.exists(socket)) {
      err.println("nodelet: no Nodelet serves commands here: " + socket + " does not exist (start Nodelet with the"
          + " same --run folder, or pass --run)");
      return 3;
    }
    try (SocketChannel channel = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
      OutputStream request = output(channel);
      request.write((line.replace('\n', ' ') + "\n").getBytes(StandardCharsets.UTF_8));
      request.flush();
      DataInputStream frames = new DataInputStream(input(channel));
      while (true) {
        int tag = frames.read();
        if (tag < 0) {
          err.println("nodelet: the connection to " + socket + " closed before the command ended");
          return 3;
        }
        byte[] data = new byte[frames.readInt()];
        frames.readFully(data);
        switch (tag) {
          case 'o' -> out.write(data);
          case 'e' -> err.write(data);
          case 'x' -> {
            out.flush();
            err.flush();
            return ByteBuffer.wrap(data).getInt();
          }
          default -> throw new IOException("unexpected frame " + tag);
        }
        out.flush();
      }
    } catch (IOException e) {
      err.println("nodelet: cannot run the command through " + socket + ": " + e.getMessage());
      return 3;
    }
  }

  /** Writes what it is given as frames of one tag. */
  private static final class FrameStream extends OutputStream {
    private final DataOutputStream frames;
    private final int tag;

    FrameStream(DataOutputStream frames, int tag) {
      this.frames = frames;
      this.tag = tag;
    }

    @Override
    public void write(int b) throws IOException {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      if (len == 0) {
        return;
      }
      synchronized (frames) {
        frames.writeByte(tag);
        frames.writeInt(len);
        frames.write(b, off, len);
        frames.flush();
      }
    }
  }
}
