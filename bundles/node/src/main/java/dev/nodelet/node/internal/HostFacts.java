package dev.nodelet.node.internal;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Locale;
import java.util.Optional;

/**
 * What the node reports about the machine and the JVM it runs in.
 *
 * @param cpus the processors the JVM may use ({@link Runtime#availableProcessors()})
 * @param memoryBytes the memory pods (bundles in this JVM) can use: the JVM's maximum heap
 * @param ephemeralStorageBytes the size of the file system that holds the node's files
 * @param internalIp the node's InternalIP address
 * @param operatingSystem as Kubernetes names it: {@code linux}, {@code windows}, {@code darwin}
 * @param architecture as Kubernetes names it: {@code amd64}, {@code arm64}, ...
 * @param osImage the distribution's name ({@code PRETTY_NAME} of {@code /etc/os-release})
 * @param kernelVersion the kernel's version
 * @param runtimeVersion the OSGi framework, {@code osgi://<symbolic name>/<version>}
 * @param nodeletVersion Nodelet's version, e.g. {@code 0.2.0-SNAPSHOT}
 * @param machineId {@code /etc/machine-id}; empty where there is none
 * @param bootId {@code /proc/sys/kernel/random/boot_id}, which a reboot changes; empty where there is none
 */
record HostFacts(int cpus, long memoryBytes, long ephemeralStorageBytes, String internalIp, String operatingSystem,
    String architecture, String osImage, String kernelVersion, String runtimeVersion, String nodeletVersion,
    String machineId, String bootId) {

  /**
   * The facts of this machine and JVM.
   *
   * @param settings the node's settings (address and storage path, if configured)
   * @param defaultStorage the folder to measure when no path is configured
   * @param runtimeVersion the OSGi framework, {@code osgi://<symbolic name>/<version>}
   * @param nodeletVersion Nodelet's version
   */
  static HostFacts detect(NodeSettings settings, Path defaultStorage, String runtimeVersion, String nodeletVersion) {
    String osName = System.getProperty("os.name", "");
    Path storage = settings.storagePath().isEmpty() ? defaultStorage : Path.of(settings.storagePath());
    return new HostFacts(Runtime.getRuntime().availableProcessors(), Runtime.getRuntime().maxMemory(),
        storageBytes(storage), settings.address().isEmpty() ? detectAddress() : settings.address(),
        operatingSystem(osName), architecture(System.getProperty("os.arch", "")),
        osImage(osName, System.getProperty("os.version", "")), System.getProperty("os.version", ""),
        runtimeVersion, nodeletVersion, firstLine("/etc/machine-id"), firstLine("/proc/sys/kernel/random/boot_id"));
  }

  private static String firstLine(String file) {
    try {
      return Files.readAllLines(Path.of(file)).stream().findFirst().orElse("").strip();
    } catch (IOException | RuntimeException e) {
      return ""; // not Linux, or not readable: not reported
    }
  }

  /** The GOOS name of {@code os.name}. */
  static String operatingSystem(String osName) {
    String lower = osName.toLowerCase(Locale.ROOT);
    if (lower.startsWith("windows")) {
      return "windows";
    }
    if (lower.startsWith("mac") || lower.startsWith("darwin")) {
      return "darwin";
    }
    return lower.replace(" ", "");
  }

  /** The GOARCH name of {@code os.arch}. */
  static String architecture(String osArch) {
    return switch (osArch.toLowerCase(Locale.ROOT)) {
      case "amd64", "x86_64" -> "amd64";
      case "aarch64", "arm64" -> "arm64";
      case "x86", "i386", "i486", "i586", "i686" -> "386";
      case "ppc64le" -> "ppc64le";
      case "s390x" -> "s390x";
      case "riscv64" -> "riscv64";
      case "arm" -> "arm";
      default -> osArch.toLowerCase(Locale.ROOT);
    };
  }

  private static String osImage(String osName, String osVersion) {
    try {
      for (String line : Files.readAllLines(Path.of("/etc/os-release"))) {
        if (line.startsWith("PRETTY_NAME=")) {
          return line.substring("PRETTY_NAME=".length()).replace("\"", "").strip();
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux, or no os-release: the JVM's own names
    }
    return osName + " " + osVersion;
  }

  private static long storageBytes(Path folder) {
    try {
      return Files.getFileStore(folder).getTotalSpace();
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }

  /** The first IPv4 address of an interface that is up and not a loopback, else the host's address. */
  static String detectAddress() {
    try {
      for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        if (!nic.isUp() || nic.isLoopback() || nic.isVirtual()) {
          continue;
        }
        Optional<InetAddress> v4 = nic.inetAddresses().filter(a -> a instanceof Inet4Address
            && !a.isLinkLocalAddress()).findFirst();
        if (v4.isPresent()) {
          return v4.get().getHostAddress();
        }
      }
    } catch (SocketException e) {
      // no interfaces to list: fall back
    }
    try {
      return InetAddress.getLocalHost().getHostAddress();
    } catch (UnknownHostException e) {
      return InetAddress.getLoopbackAddress().getHostAddress();
    }
  }
}
