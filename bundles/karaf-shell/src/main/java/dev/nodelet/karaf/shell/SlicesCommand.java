package dev.nodelet.karaf.shell;

import dev.nodelet.dra.DraStatus;
import dev.nodelet.shell.views.DraViews;
import org.apache.karaf.shell.api.action.Action;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code nodelet:slices}: this node's ResourceSlices in the DRA node controller's informer cache. */
@Service
@Command(scope = "nodelet", name = "slices", description = "Lists this node's ResourceSlices with driver, pool, "
    + "generation and device count")
public class SlicesCommand implements Action {

  /** Optional, so that the object cache commands of this bundle register without the DRA controller. */
  @Reference(optional = true)
  DraStatus status;

  @Override
  public Object execute() {
    if (status == null) {
      throw new IllegalStateException("the DRA node controller (feature nodelet-dra) is not running");
    }
    System.out.print(DraViews.slices(status.slices()));
    return null;
  }
}
