"""Log from one rank without letting the ranks diverge. Start with torchrun (TPU: launch_tpu.sh).

Every rank computes its value, every rank joins the collective and reads the result;
only the print is left to rank 0. Runs on TPU (tpu_dist) or, to try it out, on CPU (gloo).
"""

import torch
import torch.distributed as dist


def main() -> None:
    accelerator = torch.accelerator.current_accelerator(check_available=True)
    on_tpu = accelerator is not None and accelerator.type == "tpu"
    device = torch.device("tpu", 0) if on_tpu else torch.device("cpu")
    dist.init_process_group(backend="tpu_dist" if on_tpu else "gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()

    torch.manual_seed(rank)
    local_loss = torch.rand(1, device=device)  # stands in for this rank's loss

    # Risky: `if rank == 0: print(local_loss.item())` makes rank 0 alone wait for its
    # device while the others run ahead into the next collective; ranks can hang.
    # Safe: all ranks gather, all ranks read the result, then one rank prints it.
    gathered = [torch.zeros(1, device=device) for _ in range(world_size)]
    dist.all_gather(gathered, local_loss)
    per_rank = torch.cat(gathered).tolist()  # every rank reads the same values
    if rank == 0:
        mean = sum(per_rank) / world_size
        print(f"losses of {world_size} ranks: {[round(v, 4) for v in per_rank]}, mean {mean:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
