package dev.nodelet.dra;

import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Receives the snapshots of one {@link DeviceSnapshots#subscribe subscription}. Implemented by the controller; the
 * methods return quickly and never block on I/O.
 */
@ProviderType
public interface SnapshotListener {

  /**
   * A full snapshot of the driver's resources on this node; it replaces the previous one.
   *
   * <p>An invalid snapshot (a device name that is not a DNS label, a duplicate device in a pool, too many
   * attributes, ...) is rejected with an error that names the driver and the problem; the slices published from
   * the last valid snapshot stay as they are. The driver must not change the objects after passing them.
   *
   * @param pools every pool of the driver, each with a name unique in the snapshot; an empty list means that the
   *     driver has no devices
   */
  void onSnapshot(List<Pool> pools);

  /**
   * The stream failed.
   *
   * @param cause what went wrong, for the log
   * @param retryable {@code true} to subscribe again after a backoff; {@code false} when the driver does not report
   *     resources at all (gRPC "Unimplemented"): monitoring stops until the driver is registered again
   */
  void onError(Throwable cause, boolean retryable);

  /** The stream ended cleanly; the last snapshot stays in force until the driver is registered again. */
  void onCompleted();
}
