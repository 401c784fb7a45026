package dev.nodelet.dra.grpc.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;

/**
 * File type and permission checks on the registration folder and the driver sockets. Whoever can connect to a
 * driver socket can feed devices into the node's ResourceSlices, so only the owner may have access: the folder must
 * be {@code 0700} (or stricter), a socket {@code 0600} (or stricter). Links are not followed, so a link cannot lend
 * a loose target the mode of a strict one.
 */
final class SocketFiles {

  private static final int TYPE_MASK = 0170000;
  private static final int TYPE_SOCKET = 0140000;
  private static final int TYPE_DIRECTORY = 0040000;
  private static final int FOLDER_ALLOWED = 0700;
  private static final int SOCKET_ALLOWED = 0600;

  private SocketFiles() {
  }

  /**
   * What identifies one socket file: a driver that restarts binds a new file (a new inode) under the same name, and
   * a changed mode must be checked again.
   */
  record FileId(long device, long inode, int mode) {
  }

  /** The identity and {@code st_mode} of a file, or {@code null} if it does not exist. */
  static FileId id(Path path) throws IOException {
    try {
      Map<String, Object> attributes = Files.readAttributes(path, "unix:dev,ino,mode", LinkOption.NOFOLLOW_LINKS);
      return new FileId((Long) attributes.get("dev"), (Long) attributes.get("ino"), (Integer) attributes.get("mode"));
    } catch (NoSuchFileException e) {
      return null;
    }
  }

  /** The {@code st_mode} of a file, or -1 if it does not exist. */
  static int mode(Path path) throws IOException {
    FileId id = id(path);
    return id == null ? -1 : id.mode();
  }

  static boolean isSocket(int mode) {
    return mode != -1 && (mode & TYPE_MASK) == TYPE_SOCKET;
  }

  /** Why the folder may not be used, or {@code null} when it is a directory of mode 0700 or stricter. */
  static String folderProblem(Path folder, int mode) {
    if (mode == -1) {
      return "registration folder " + folder + " does not exist: create it with mode 0700 (or let Nodelet create"
          + " it), or set registration.folder of " + GrpcDraComponent.PID + "; drivers register once it exists";
    }
    if ((mode & TYPE_MASK) != TYPE_DIRECTORY) {
      return "registration folder " + folder + " is not a directory";
    }
    if ((mode & 07777 & ~FOLDER_ALLOWED) != 0) {
      return "registration folder " + folder + " has mode " + octal(mode) + "; it must be 0700 (no access for"
          + " group or others), so no driver registers from it until that is fixed";
    }
    return null;
  }

  /** Why the socket may not be used, or {@code null} when it is a socket of mode 0600 or stricter. */
  static String socketProblem(String what, Path socket, int mode) {
    if (mode == -1) {
      return what + " " + socket + " does not exist";
    }
    if (!isSocket(mode)) {
      return what + " " + socket + " is not a unix socket";
    }
    if ((mode & 07777 & ~SOCKET_ALLOWED) != 0) {
      return what + " " + socket + " has mode " + octal(mode) + "; it must be 0600 (no access for group or"
          + " others)";
    }
    return null;
  }

  static String octal(int mode) {
    return String.format("%04o", mode & 07777);
  }
}
